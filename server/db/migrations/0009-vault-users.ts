/** Who may use a vault entry: users by id and/or roles. Entries from before default to admins only. */
export const sql = `
alter table vault_entries add column use_users text not null default '[]';
alter table vault_entries add column use_roles text not null default '["admin"]'
`;

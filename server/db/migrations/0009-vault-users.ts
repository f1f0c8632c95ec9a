/**
 * Who may use a vault entry: users by id and/or roles; entries from before default to admins only.
 * A rotated or deleted secret is kept (encrypted) so App answers go on hiding it: an App may have
 * stored the old value, and it may still be valid where it came from.
 */
import "server-only";
export const sql = `
alter table vault_entries add column use_users text not null default '[]';
alter table vault_entries add column use_roles text not null default '["admin"]';
create table vault_retired_secrets (
  id text primary key,
  name text not null,
  secret_enc text not null,
  retired_at bigint not null
)
`;

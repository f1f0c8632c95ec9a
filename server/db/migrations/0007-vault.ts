/** The vault: named secrets, encrypted, each with the App targets it may be sent to. */
import "server-only";
export const sql = `
create table vault_entries (
  name text primary key,
  secret_enc text not null,
  allow text not null,
  created_at bigint not null,
  updated_at bigint not null
)
`;

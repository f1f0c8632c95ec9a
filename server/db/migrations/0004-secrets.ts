/** Platform secrets (the model's API key), encrypted; never returned by the API. */
import "server-only";
export const sql = `
create table platform_secrets (
  name text primary key,
  value_enc text not null,
  updated_at bigint not null
)
`;

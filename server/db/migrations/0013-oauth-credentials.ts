/**
 * OAuth sign-ins of http connections: one row per connection and person (`user_id` '' is the shared
 * sign-in an admin makes). `data_enc` (client registration, tokens, discovery, a started flow's PKCE
 * verifier) is encrypted; `state_hash` finds a started flow from its callback, `started_by` is the
 * person who started it (only they may complete it).
 */
import "server-only";
export const sql = `
create table oauth_credentials (
  connection_id text not null,
  user_id text not null,
  data_enc text not null,
  state_hash text,
  started_by text,
  updated_at bigint not null,
  primary key (connection_id, user_id)
);
create index oauth_credentials_state on oauth_credentials (state_hash)
`;

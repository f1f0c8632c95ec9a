/** `Idempotency-Key`s of API run starts: a retry with the same key returns the run the first request made. */
import "server-only";
export const sql = `
create table idempotency_keys (
  user_id text not null,
  key_hash text not null,
  request_hash text not null,
  run_id text,
  created_at bigint not null,
  primary key (user_id, key_hash)
)
`;

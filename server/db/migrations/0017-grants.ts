/**
 * Remembered grants (a person's "allow" that later matching calls reuse, audited and revocable), the
 * grant that allowed a call, how a call whose outcome was Unknown was reconciled, and a connection's
 * untrusted-content flag (null: the default from its transport and its tools' annotations).
 */
import "server-only";
export const sql = `
create table grants (
  id text primary key,
  scope text not null,
  run_id text,
  chat_id text,
  connection_id text not null,
  tool text not null,
  binding text not null,
  match text not null,
  args_digest text,
  args_enc text,
  decision_id text,
  created_by text not null,
  created_at bigint not null,
  expires_at bigint,
  revoked_by text,
  revoked_at bigint,
  uses integer not null default 0
);
create index grants_chat on grants (chat_id);
create index grants_run on grants (run_id);
alter table code_run_calls add column grant_id text;
alter table code_run_calls add column unknown_state text;
alter table code_run_calls add column unknown_by text;
alter table code_run_calls add column unknown_at bigint;
alter table connections add column untrusted_content boolean
`;

/** Decisions: a call that needs a person's answer, shaped as in the seeds, stored encrypted. */
import "server-only";
export const sql = `
create table decisions (
  id text primary key,
  chat_id text not null references chats(id) on delete cascade,
  run_id text references code_runs(id) on delete cascade,
  call_index integer,
  status text not null check (status in ('pending', 'allowed', 'denied', 'withdrawn')),
  request_enc text not null,
  decided_by text references users(id),
  created_at bigint not null,
  decided_at bigint
);
create index decisions_status on decisions (status, created_at);
alter table code_run_calls add column decision_id text;
alter table code_runs add column api_key_id text
`;

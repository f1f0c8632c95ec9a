/** Core schema: people and keys, settings, chats, connections, code runs and App operations. */
import "server-only";
export const sql = `
create table users (
  id text primary key,
  name text not null,
  role text not null check (role in ('admin', 'member')),
  created_at bigint not null
);
create table api_keys (
  id text primary key,
  user_id text not null references users(id) on delete cascade,
  name text not null,
  token_hash text not null unique,
  permissions text not null,
  created_at bigint not null,
  revoked_at bigint
);
create table web_sessions (
  id_hash text primary key,
  api_key_id text not null references api_keys(id) on delete cascade,
  created_at bigint not null,
  expires_at bigint not null
);
create table platform_settings (
  id integer primary key check (id = 1),
  version integer not null,
  data text not null,
  updated_at bigint not null
);
create table chats (
  id text primary key,
  owner_id text not null references users(id),
  title text not null,
  created_at bigint not null,
  updated_at bigint not null
);
create table chat_shares (
  chat_id text not null references chats(id) on delete cascade,
  user_id text not null references users(id) on delete cascade,
  created_at bigint not null,
  primary key (chat_id, user_id)
);
create table connections (
  id text primary key,
  name text not null,
  slug text not null,
  transport text not null,
  enabled boolean not null default true,
  policies text not null default '{}',
  builtin text,
  created_at bigint not null,
  updated_at bigint not null
);
create table code_runs (
  id text primary key,
  execution_id text not null unique,
  chat_id text not null references chats(id),
  turn_id text,
  call_id text,
  created_by text not null references users(id),
  status text not null,
  language text not null,
  code_enc text not null,
  reason_enc text not null,
  run_time bigint not null,
  seed bigint not null,
  limits text not null,
  bindings text not null,
  attempt integer not null default 1,
  completions integer not null default 0,
  host text not null,
  result_enc text,
  failure_reason text,
  error_id text,
  created_at bigint not null,
  updated_at bigint not null
);
create index code_runs_chat on code_runs (chat_id, created_at);
create table code_run_calls (
  run_id text not null references code_runs(id) on delete cascade,
  idx integer not null,
  binding text not null,
  source text not null,
  args_enc text not null,
  args_digest text not null,
  operation_id text,
  outcome_enc text,
  rejection text,
  completed_seq integer,
  created_at bigint not null,
  primary key (run_id, idx)
);
create table app_operations (
  id text primary key,
  execution_id text not null unique,
  chat_id text,
  run_id text,
  call_index integer,
  connection_id text not null,
  tool text not null,
  status text not null,
  args_enc text not null,
  result_enc text,
  error_reason text,
  started_at bigint not null,
  finished_at bigint
);
create index app_operations_run on app_operations (run_id, call_index)
`;

/** Turns and messages of chats with a model; messages are stored encrypted as model messages. */
import "server-only";
export const sql = `
create table turns (
  id text primary key,
  chat_id text not null references chats(id) on delete cascade,
  status text not null check (status in ('Running', 'Completed', 'Failed', 'Cancelled')),
  host text not null,
  created_by text not null references users(id),
  api_key_id text,
  error text,
  created_at bigint not null,
  updated_at bigint not null
);
create index turns_chat on turns (chat_id, created_at);
create table messages (
  id text primary key,
  chat_id text not null references chats(id) on delete cascade,
  turn_id text,
  seq bigint not null,
  kind text not null check (kind in ('model', 'notice')),
  content_enc text not null,
  created_at bigint not null
);
create index messages_chat on messages (chat_id, seq);
alter table code_runs add column claimed_at bigint;
alter table code_runs add column reported boolean not null default false
`;

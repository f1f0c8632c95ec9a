/**
 * Many instances on one database: each instance's lease (its heartbeat), the instance hosting a run,
 * page presence by instance, and durable background jobs (server/jobs.ts).
 */
import "server-only";
export const sql = `
create table instances (
  id text primary key,
  pid integer not null,
  started_at bigint not null,
  lease_until bigint not null
);
alter table code_runs add column host_instance text;
create table page_presence (
  chat_id text not null,
  instance_id text not null,
  pages integer not null,
  primary key (chat_id, instance_id)
);
create table jobs (
  id text primary key,
  kind text not null,
  dedupe_key text unique,
  payload text not null,
  run_at bigint not null,
  attempts integer not null default 0,
  locked_by text,
  last_error text,
  created_at bigint not null
);
create index jobs_due on jobs (run_at);
`;

/**
 * Data of the built-in demo apps (Work calendar, Notes, Email), which live in the database, with seed
 * data, and their three connections, created here so they exist from the first start on (an admin may
 * later disable or remove them; nothing brings them back). Seed text holds no `;` at a line end.
 */
import "server-only";
export const sql = `
create table calendar_events (
  id text primary key,
  day text not null,
  title text not null,
  start_at text not null,
  end_at text not null,
  attendees integer not null
);
create index calendar_events_day on calendar_events (day, start_at);
create table notes (
  id text primary key,
  title text not null,
  body text not null,
  created_at bigint not null,
  updated_at bigint not null
);
create table emails (
  id text primary key,
  to_address text not null,
  subject text not null,
  body text not null,
  sent_at bigint not null
);
create index emails_sent on emails (sent_at);
insert into calendar_events (id, day, title, start_at, end_at, attendees) values
  ('evt_seed_01', '2026-10-23', 'Engineering all-hands', '2026-10-23T09:00:00Z', '2026-10-23T10:00:00Z', 48),
  ('evt_seed_02', '2026-10-23', '1:1 with Priya', '2026-10-23T10:30:00Z', '2026-10-23T11:00:00Z', 2),
  ('evt_seed_03', '2026-10-23', 'Q4 roadmap review', '2026-10-23T13:00:00Z', '2026-10-23T14:30:00Z', 14),
  ('evt_seed_04', '2026-10-23', 'Design critique: onboarding flow', '2026-10-23T15:00:00Z', '2026-10-23T16:00:00Z', 6),
  ('evt_seed_05', '2026-10-23', 'Incident postmortem: search outage', '2026-10-23T16:30:00Z', '2026-10-23T17:15:00Z', 9),
  ('evt_seed_06', '2026-10-24', 'Customer advisory board', '2026-10-24T09:30:00Z', '2026-10-24T11:30:00Z', 22),
  ('evt_seed_07', '2026-10-24', 'Hiring debrief: staff engineer', '2026-10-24T12:00:00Z', '2026-10-24T12:45:00Z', 5),
  ('evt_seed_08', '2026-10-24', 'Company town hall', '2026-10-24T14:00:00Z', '2026-10-24T15:00:00Z', 120),
  ('evt_seed_09', '2026-10-24', 'Budget sync with finance', '2026-10-24T15:30:00Z', '2026-10-24T16:00:00Z', 4),
  ('evt_seed_10', '2026-10-25', 'Team offsite planning', '2026-10-25T10:00:00Z', '2026-10-25T11:00:00Z', 8);
insert into notes (id, title, body, created_at, updated_at) values
  ('note_seed_1', 'Q4 planning', 'Goals: ship Code Mode, cut p95 latency by 30 percent, hire two engineers. Risks: search infra migration overlaps with the launch.', 1792224000000, 1792224000000),
  ('note_seed_2', 'Offsite ideas', 'Venue shortlist: the lake house, the old mill. Agenda: one day of planning, one day of hacking. Ask finance about the budget before Friday.', 1792310400000, 1792310400000),
  ('note_seed_3', 'Reading list', 'Designing Data-Intensive Applications, The Mythical Man-Month, A Philosophy of Software Design.', 1792396800000, 1792396800000);
insert into connections (id, name, slug, transport, enabled, policies, builtin, created_at, updated_at) values
  ('conn_work_calendar', 'Work calendar', 'work_calendar', '{"type":"builtin","app":"work-calendar"}', true, '{}', 'work-calendar', floor(extract(epoch from now()) * 1000)::bigint + 1, floor(extract(epoch from now()) * 1000)::bigint + 1),
  ('conn_notes', 'Notes', 'notes', '{"type":"builtin","app":"notes"}', true, '{}', 'notes', floor(extract(epoch from now()) * 1000)::bigint + 2, floor(extract(epoch from now()) * 1000)::bigint + 2),
  ('conn_email', 'Email', 'email', '{"type":"builtin","app":"email"}', true, '{}', 'email', floor(extract(epoch from now()) * 1000)::bigint + 3, floor(extract(epoch from now()) * 1000)::bigint + 3)
`;

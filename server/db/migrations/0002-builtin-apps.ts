/** Data of the built-in demo apps (Work calendar, Notes, Email), which live in the database. */
export const sql = `
create table calendar_events (
  id text primary key,
  day text not null,
  title text not null,
  start_at text not null,
  end_at text not null,
  attendees integer not null
);
create index calendar_events_day on calendar_events (day)
`;

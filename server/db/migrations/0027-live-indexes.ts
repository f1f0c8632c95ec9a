/**
 * The sweep (every 5 s, code-runs/sweep.ts) looks for runs and App operations still going: Running,
 * Queued or Waiting runs, operations Running, waiting for input or out as tasks. Without an index for them
 * each look read every run and every operation ever made: on PGlite with 30,500 runs and 610,000
 * operations one sweep took ~590 ms of the one connection every 5 s, growing with the tables. These
 * partial indexes hold only the rows still going (a handful), so a sweep takes ~6 ms there.
 * `code_runs_live` is on `status` only, not `updated_at`: every nested call moves `updated_at` (the
 * completion counter's update), and an indexed column there would stop those updates from staying on
 * their page (0023-write-room).
 */
import "server-only";
export const sql = `
create index app_operations_open on app_operations (status, started_at)
  where status in ('Running', 'InputRequired', 'Task');
create index code_runs_live on code_runs (status) where status in ('Running', 'Queued', 'Waiting')
`;

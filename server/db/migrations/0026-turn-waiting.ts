/**
 * A run whose turn moved on before it ended (the turn's tool result said "waiting"): its end is posted into
 * the chat later (reportRunIfLate). Before this column only runs with a decision were posted, so a run of a
 * turn parked on App input, an MCP task or an Unknown call never reported its result. Rows written before
 * keep the old rule: a run not yet reported that has a decision.
 */
import "server-only";
export const sql = `
alter table code_runs add column turn_waiting boolean not null default false;
update code_runs set turn_waiting = true
  where reported = false and turn_id is not null and exists (select 1 from decisions d where d.run_id = code_runs.id)
`;

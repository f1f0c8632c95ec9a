/**
 * App operations that the App runs as a task (MCP Tasks): the task's id, last status and status message
 * sealed in `task_enc`; `task_status` in the clear (working, input_required, completed, failed,
 * cancelled) so a re-run can tell that a run still has an unfinished task without opening anything.
 */
import "server-only";
export const sql = `
alter table app_operations add column task_enc text;
alter table app_operations add column task_status text
`;

/**
 * A program's call seals its arguments once, on its call (code_run_calls.args_enc); the App operation
 * linked to that call keeps none of its own (server/services/app-calls.ts), so the column may be null.
 */
import "server-only";
export const sql = `
alter table app_operations alter column args_enc drop not null;
`;

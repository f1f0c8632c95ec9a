/** App operations that wait for a person's input (MCP elicitation) remember which question they asked. */
import "server-only";
export const sql = `
alter table app_operations add column input_id text;
alter table app_operations add column input_enc text
`;

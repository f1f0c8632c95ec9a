/** App operations keep the last progress their App reported (`notifications/progress`), sealed like the result. */
import "server-only";
export const sql = `
alter table app_operations add column progress_enc text
`;

/**
 * A program's call that an App asked for input parks durably: the App's `input_required` requests and its
 * `requestState` (sealed), the person's answer (sealed) until the retry is sent, and the question's deadline.
 */
import "server-only";
export const sql = `
alter table app_operations add column input_state_enc text;
alter table app_operations add column input_answer_enc text;
alter table app_operations add column input_expires_at bigint
`;

/**
 * A program's call that an App asked for input parks durably: the App's `input_required` requests and its
 * `requestState` (sealed), the person's answer (sealed) until the retry is sent, and the question's deadline.
 * A started OAuth sign-in remembers the page (a chat) to send the person back to.
 */
import "server-only";
export const sql = `
alter table app_operations add column input_state_enc text;
alter table app_operations add column input_answer_enc text;
alter table app_operations add column input_expires_at bigint;
alter table oauth_credentials add column return_to text
`;

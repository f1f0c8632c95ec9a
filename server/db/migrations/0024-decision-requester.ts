/**
 * The key that asked for a direct (model) tool call's decision: the call is sent as that key once someone
 * allows it, whoever decides (an admin deciding in a member's chat does not lend the call the admin's vault
 * rights or App sign-ins). Null for a program's calls (their run resumes as its creator) and for rows
 * written before this column.
 */
import "server-only";
export const sql = `
alter table decisions add column requested_by_key text
`;

/**
 * Page presence by person: a chat's programs go to a browser only while a page of the person whose turn
 * it is listens, since only that person may host them (code-runs/rows.ts `runForHost`). Before, any
 * viewer (a reader of a shared chat, an admin) counted, and each turn waited for a claim that never came.
 * Rows from before this column are leases of the instances that wrote them and end with those leases.
 */
import "server-only";
export const sql = `
alter table page_presence add column user_id text not null default '';
alter table page_presence drop constraint page_presence_pkey;
alter table page_presence add primary key (chat_id, instance_id, user_id)
`;

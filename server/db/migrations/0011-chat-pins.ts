/** Chats can be pinned to the top of the list (the time they were pinned; null: not pinned). */
import "server-only";
export const sql = `
alter table chats add column pinned_at bigint
`;

/**
 * A person an admin removed keeps their row (their chats, runs, decisions and grants still name them),
 * marked with when: `removed_at`. Their keys were revoked at the same time, and no key of a removed person
 * authenticates (auth.ts joins only people not removed), even one written in later by hand.
 */
import "server-only";
export const sql = "alter table users add column removed_at bigint";

/**
 * Room for the journal's writes (measured on PGlite with the real statements, issue 15):
 * - code_runs rows are updated on every call (the completion counter) and at every status change; with
 *   full pages a new version often goes to another page, and then each of the table's indexes gets an
 *   entry too. Pages kept 40% free let those updates stay on their page (heap-only: ~70% → ~93% of them).
 * - A call's record with its outcome (~2.7 KB: the sealed answer) is over Postgres's 2 KB threshold, so
 *   the sealed answer went out of line in two TOAST chunks and their index entries, and was fetched back
 *   from there by every read of the run's calls. A row up to a page now stays in its page; a larger one is
 *   still stored out of line.
 * Both apply to pages written from now on; nothing is rewritten.
 */
import "server-only";
export const sql = `
alter table code_runs set (fillfactor = 60);
alter table code_run_calls set (toast_tuple_target = 8160)
`;

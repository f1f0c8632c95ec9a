/** A run keeps the vault names it started with, so a re-run sees the same `vault` object. */
import "server-only";
export const sql = `
alter table code_runs add column vault_names text
`;

/**
 * Every encrypted column, with how its associated data is formed (`<table>:<row id>:<field>`). Used by
 * key rotation to re-encrypt everything; services seal and open with the same names.
 */
import "server-only";
export interface EncryptedColumn {
  table: string;
  column: string;
  field: string;
  /** SQL expression of the row id used in the associated data. */
  idSql: string;
  /** SQL condition that selects one row by that id (with $2 as the id). */
  whereSql: string;
}

export const ENCRYPTED_COLUMNS: readonly EncryptedColumn[] = [
  { table: "code_runs", column: "code_enc", field: "code", idSql: "id", whereSql: "id = $2" },
  { table: "code_runs", column: "reason_enc", field: "reason", idSql: "id", whereSql: "id = $2" },
  { table: "code_runs", column: "result_enc", field: "result", idSql: "id", whereSql: "id = $2" },
  {
    table: "code_run_calls",
    column: "args_enc",
    field: "args",
    idSql: "run_id || ':' || idx",
    whereSql: "run_id || ':' || idx = $2",
  },
  {
    table: "code_run_calls",
    column: "outcome_enc",
    field: "outcome",
    idSql: "run_id || ':' || idx",
    whereSql: "run_id || ':' || idx = $2",
  },
  { table: "app_operations", column: "args_enc", field: "args", idSql: "id", whereSql: "id = $2" },
  { table: "app_operations", column: "result_enc", field: "result", idSql: "id", whereSql: "id = $2" },
  { table: "app_operations", column: "input_enc", field: "input", idSql: "id", whereSql: "id = $2" },
  { table: "app_operations", column: "input_state_enc", field: "input_state", idSql: "id", whereSql: "id = $2" },
  { table: "app_operations", column: "input_answer_enc", field: "input_answer", idSql: "id", whereSql: "id = $2" },
  { table: "grants", column: "args_enc", field: "args", idSql: "id", whereSql: "id = $2" },
  { table: "decisions", column: "request_enc", field: "request", idSql: "id", whereSql: "id = $2" },
  { table: "connections", column: "transport_enc", field: "transport", idSql: "id", whereSql: "id = $2" },
  { table: "messages", column: "content_enc", field: "content", idSql: "id", whereSql: "id = $2" },
  { table: "vault_entries", column: "secret_enc", field: "secret", idSql: "name", whereSql: "name = $2" },
  { table: "vault_retired_secrets", column: "secret_enc", field: "secret", idSql: "id", whereSql: "id = $2" },
  { table: "platform_secrets", column: "value_enc", field: "value", idSql: "name", whereSql: "name = $2" },
];

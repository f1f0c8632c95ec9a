/**
 * An App operation's first write as a group-commit kind (server/db/batch.ts): the operation row as
 * Running, for a program's call the link from the run's call to it, and the vault's fingerprint (which
 * secrets to redact), for every operation starting together in one statement. Each caller's row is
 * durable before its App is sent anything.
 */
import "server-only";
import type { BatchKind } from "../db/batch";
import { VAULT_FINGERPRINT } from "./vault";

export interface OperationStart {
  id: string;
  executionId: string;
  chatId: string | null;
  runId: string | null;
  callIndex: number | null;
  connectionId: string;
  tool: string;
  /** Null for a program's call: its arguments are sealed once, on the run's call it is linked to. */
  argsEnc: string | null;
  startedAt: number;
}

export const startOperations: BatchKind<OperationStart, { fingerprint: string }> = {
  name: "start-operations",
  // Two operations linked to one call are never in one statement (the link would pick one of them).
  key: (m) => (m.runId !== null && m.callIndex !== null ? `${m.runId}:${m.callIndex}` : m.id),
  size: (m) => m.argsEnc?.length ?? 0,
  async run(db, members) {
    const [row] = await db.query<{ fingerprint: string }>(
      `with v as (
         select * from json_to_recordset($1::json) as v(id text, execution_id text, chat_id text, run_id text,
           call_index int, connection_id text, tool text, args_enc text, started_at bigint)),
       op as (
         insert into app_operations (id, execution_id, chat_id, run_id, call_index, connection_id, tool, status, args_enc, started_at)
         select id, execution_id, chat_id, run_id, call_index, connection_id, tool, 'Running', args_enc, started_at from v
         returning id, run_id, call_index),
       link as (
         update code_run_calls c set operation_id = op.id from op
         where c.run_id = op.run_id and c.idx = op.call_index and c.run_id = any($2::text[]))
       select ${VAULT_FINGERPRINT} as fingerprint`,
      [
        JSON.stringify(
          members.map((m) => ({
            id: m.id,
            execution_id: m.executionId,
            chat_id: m.chatId,
            run_id: m.runId,
            call_index: m.callIndex,
            connection_id: m.connectionId,
            tool: m.tool,
            args_enc: m.argsEnc,
            started_at: m.startedAt,
          })),
        ),
        // The runs again as an array: `= any(…)` finds their calls by index, not by a scan of every call.
        [...new Set(members.flatMap((m) => (m.runId === null ? [] : [m.runId])))],
      ],
    );
    if (!row) throw new Error("start-operations: no fingerprint");
    return members.map(() => ({ fingerprint: row.fingerprint }));
  },
};

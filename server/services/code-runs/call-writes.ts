/**
 * The journal's writes per nested call as group-commit kinds (server/db/batch.ts): the call's record
 * (before anything is sent) and its outcome (before the program sees it); for a read sent before any write
 * (reads.ts), its record, operation and outcome at once. Calls of many runs arriving together are written
 * by one statement each, every caller getting its own row back.
 */
import "server-only";
import type { BatchKind } from "../../db/batch";
import { AppError } from "../errors";
import { VAULT_FINGERPRINT } from "../vault";
import type { RunRow } from "./rows";

/** A call's stop when its run no longer runs (it ended or was cancelled); undefined while it runs or waits. */
export function notRunning(
  status: RunRow["status"],
): { type: "stop"; reason: "Cancelled"; message: string } | undefined {
  if (status === "Running" || status === "Waiting") return undefined;
  return { type: "stop", reason: "Cancelled", message: `The run is ${status}, not running.` };
}

/**
 * What a call's write found of its run, for the host at `attempt`: a run that is gone or at another
 * attempt throws; one that no longer runs is the call's stop (notRunning).
 */
export function writtenStop(found: { status: RunRow["status"] | null; attempt: number | null }, attempt: number) {
  if (found.status === null || found.attempt === null) throw new AppError("NOT_FOUND", "No such code run.");
  if (found.attempt !== attempt)
    throw new AppError("CONFLICT", `This is attempt ${attempt}; the run is at attempt ${found.attempt}.`);
  return notRunning(found.status);
}

export interface CallRecord {
  runId: string;
  index: number;
  binding: string;
  /** JSON of the call's connection and tool as resolved now. */
  source: string;
  argsEnc: string;
  digest: string;
  createdAt: number;
  /** The attempt the host runs: the call is recorded only while it is the run's attempt and the run runs. */
  attempt: number;
  /** Whose stored policies come back with the record ("" for none). */
  connectionId: string;
}

/** A call record's fields as the statements' `json_to_recordset` reads them; `n` is the member's place. */
function recordJson(m: CallRecord, n: number) {
  return {
    n,
    run_id: m.runId,
    idx: m.index,
    binding: m.binding,
    source: m.source,
    args_enc: m.argsEnc,
    args_digest: m.digest,
    created_at: m.createdAt,
    attempt: m.attempt,
    connection_id: m.connectionId,
  };
}

/** What a write of a call's record tells its caller. */
export interface CallWritten {
  /** null: no such run. */
  status: RunRow["status"] | null;
  attempt: number | null;
  /** Written now (false: the run is not running at this attempt, or the index was recorded before; see each kind for more). */
  inserted: boolean;
}

/** A row of a call-write statement: the member's place `n` and its CallWritten. */
type WrittenRow = { n: number } & CallWritten;

/** Each member's answer from the statement's rows, in member order (no row: no such run). */
function writtenOf<R extends WrittenRow>(rows: R[], count: number): { written: CallWritten; row: R | undefined }[] {
  const byN = new Map(rows.map((r) => [Number(r.n), r]));
  return Array.from({ length: count }, (_, n) => {
    const row = byN.get(n);
    return {
      written: { status: row?.status ?? null, attempt: row?.attempt ?? null, inserted: row?.inserted === true },
      row,
    };
  });
}

/** Two writes of one call never share a statement (BatchKind.key). */
const oneCall = (m: { runId: string; index: number }) => `${m.runId}:${m.index}`;

export interface CallRecorded extends CallWritten {
  /** The connection's stored policies (null: the connection is gone). */
  policies: string | null;
}

/**
 * The run's status and attempt now, the call recorded only while that attempt is running and the index is
 * new, and the tool's stored policies; one statement for every member. Two members of one call never
 * share it: the first one owns the index, the second finds it recorded.
 */
export const recordCalls: BatchKind<CallRecord, CallRecorded> = {
  name: "record-calls",
  key: oneCall,
  size: (m) => m.argsEnc.length + m.source.length,
  async run(db, members) {
    const rows = await db.query<WrittenRow & { policies: string | null }>(
      // Each member's run is looked up by its key (a lateral subquery kept apart by `offset 0`): a join the
      // planner is free to choose became a hash join over every run, whose cost grows with the table.
      `with v as (
         select v.*, r.status as run_status, r.attempt as run_attempt
         from json_to_recordset($1::json) as v(n int, run_id text, idx int, binding text, source text,
           args_enc text, args_digest text, created_at bigint, attempt int, connection_id text)
         left join lateral (select status, attempt from code_runs where id = v.run_id offset 0) r on true),
       ins as (
         insert into code_run_calls (run_id, idx, binding, source, args_enc, args_digest, created_at)
         select run_id, idx, binding, source, args_enc, args_digest, created_at from v
         where v.run_attempt = v.attempt and v.run_status in ('Running', 'Waiting')
         on conflict (run_id, idx) do nothing returning run_id, idx)
       select v.n, v.run_status as status, v.run_attempt as attempt,
         exists (select 1 from ins where ins.run_id = v.run_id and ins.idx = v.idx) as inserted,
         (select policies from connections where id = v.connection_id) as policies
       from v order by v.n`,
      [JSON.stringify(members.map(recordJson))],
    );
    return writtenOf(rows, members.length).map(({ written, row }) => ({ ...written, policies: row?.policies ?? null }));
  },
};

export interface OutcomeWrite {
  runId: string;
  index: number;
  outcomeEnc: string;
  rejection: string | null;
  at: number;
  /** The end of the call's App operation, stored in the same statement (the two never disagree after a crash). */
  operation?: { id: string; status: string; resultEnc: string | null; errorReason: string | null; finishedAt: number };
}

/**
 * Outcomes with their places in their runs' completion orders: each run's counter moves by its members'
 * count in one update, and its members take the places in the order they arrived (statements of a kind go
 * one at a time, so that is the order callers asked in). Two writes of one call never share a statement.
 */
export const recordOutcomes: BatchKind<OutcomeWrite, void> = {
  name: "record-outcomes",
  key: oneCall,
  size: (m) => m.outcomeEnc.length + (m.operation?.resultEnc?.length ?? 0),
  async run(db, members) {
    const place = new Map<string, number>();
    const rows = members.map((m) => {
      const k = (place.get(m.runId) ?? 0) + 1;
      place.set(m.runId, k);
      return {
        run_id: m.runId,
        idx: m.index,
        k,
        outcome_enc: m.outcomeEnc,
        rejection: m.rejection,
        at: m.at,
        op_id: m.operation?.id ?? null,
        op_status: m.operation?.status ?? null,
        op_result: m.operation?.resultEnc ?? null,
        op_reason: m.operation?.errorReason ?? null,
        op_finished: m.operation?.finishedAt ?? null,
      };
    });
    await db.query(
      `with v as (
         select * from json_to_recordset($1::json) as v(run_id text, idx int, k int, outcome_enc text, rejection text,
           at bigint, op_id text, op_status text, op_result text, op_reason text, op_finished bigint)),
       g as (select run_id, count(*)::int as n, max(at) as at from v group by run_id),
       seq as (
         update code_runs c set completions = c.completions + g.n, updated_at = g.at
         from g where c.id = g.run_id and c.id = any($2::text[]) returning c.id, c.completions),
       op as (
         update app_operations o set status = v.op_status, result_enc = v.op_result, error_reason = v.op_reason,
           finished_at = v.op_finished
         from v where v.op_id is not null and o.id = v.op_id and o.id = any($3::text[]))
       update code_run_calls c set outcome_enc = v.outcome_enc, rejection = v.rejection,
         completed_seq = coalesce(s.completions - g.n + v.k, 0)
       from v join g on g.run_id = v.run_id left join seq s on s.id = v.run_id
       where c.run_id = v.run_id and c.idx = v.idx and c.run_id = any($2::text[])`,
      // The keys again as arrays: `= any(…)` finds the runs and operations by index (see recordCalls).
      [JSON.stringify(rows), [...place.keys()], members.flatMap((m) => (m.operation ? [m.operation.id] : []))],
    );
    return members.map(() => undefined);
  },
};

/** A read's record (written only while `attempt` is the run's and the run runs) with its outcome and operation. */
export interface ReadWrite extends CallRecord {
  /** The tool's name and its policy without an admin's override: the stored policy must still allow it. */
  tool: string;
  defaultPolicy: string;
  /** The vault's fingerprint the answer was redacted with: written only while the vault is still that. */
  fingerprint: string;
  outcomeEnc: string;
  at: number;
  operation: {
    id: string;
    executionId: string;
    chatId: string | null;
    /** null for a program's call: its arguments are sealed once, on the call (app-calls.ts). */
    argsEnc: string | null;
    startedAt: number;
    status: string;
    /** null when the call's outcome holds it (app-calls.ts). */
    resultEnc: string | null;
    errorReason: string | null;
    finishedAt: number;
  };
}

/** `inserted` false also when the stored policy no longer allows the tool or the vault changed. */
export type ReadWritten = CallWritten;

/**
 * A read-only call sent before anything was written (reads.ts): its record with its outcome and its place
 * in the run's completion order, and its App operation already ended, in ONE statement for every member.
 * Nothing is written for a member whose run is not running at its attempt, whose index is recorded,
 * whose tool the stored policy no longer allows, or whose answer was redacted with an older vault.
 */
export const recordReads: BatchKind<ReadWrite, ReadWritten> = {
  name: "record-reads",
  key: oneCall,
  size: (m) => m.argsEnc.length + m.source.length + m.outcomeEnc.length + (m.operation.resultEnc?.length ?? 0),
  async run(db, members) {
    const rows = await db.query<WrittenRow>(
      // Runs and connections are looked up by key (lateral subqueries, see recordCalls). The counter moves
      // by the members that may be written; one that then meets a recorded index leaves a gap in the order.
      `with v as (
         select v.*, r.status as run_status, r.attempt as run_attempt,
           (select policies from connections where id = v.connection_id) as policies
         from json_to_recordset($1::json) as v(n int, run_id text, idx int, binding text, source text,
           args_enc text, args_digest text, created_at bigint, attempt int, connection_id text, tool text,
           default_policy text, fingerprint text, outcome_enc text, at bigint, op_id text, execution_id text,
           chat_id text, op_args text, started_at bigint, op_status text, op_result text, op_reason text,
           finished_at bigint)
         left join lateral (select status, attempt from code_runs where id = v.run_id offset 0) r on true),
       fp as (select ${VAULT_FINGERPRINT} as f),
       ok as (
         select v.*, row_number() over (partition by v.run_id order by v.n)::int as k from v, fp
         where v.run_attempt = v.attempt and v.run_status in ('Running', 'Waiting') and v.fingerprint = fp.f
           and v.policies is not null
           and (case when v.policies::jsonb ->> v.tool in ('allow', 'ask', 'deny') then v.policies::jsonb ->> v.tool
                else v.default_policy end) = 'allow'),
       g as (select run_id, count(*)::int as n, max(at) as at from ok group by run_id),
       seq as (
         update code_runs c set completions = c.completions + g.n, updated_at = g.at
         from g where c.id = g.run_id and c.id = any($2::text[]) returning c.id, c.completions),
       ins as (
         insert into code_run_calls (run_id, idx, binding, source, args_enc, args_digest, created_at, outcome_enc,
           completed_seq, operation_id)
         select ok.run_id, ok.idx, ok.binding, ok.source, ok.args_enc, ok.args_digest, ok.created_at, ok.outcome_enc,
           s.completions - g.n + ok.k, ok.op_id
         from ok join g on g.run_id = ok.run_id join seq s on s.id = ok.run_id
         on conflict (run_id, idx) do nothing returning run_id, idx),
       op as (
         insert into app_operations (id, execution_id, chat_id, run_id, call_index, connection_id, tool, status,
           args_enc, started_at, result_enc, error_reason, finished_at)
         select ok.op_id, ok.execution_id, ok.chat_id, ok.run_id, ok.idx, ok.connection_id, ok.tool, ok.op_status,
           ok.op_args, ok.started_at, ok.op_result, ok.op_reason, ok.finished_at
         from ok join ins on ins.run_id = ok.run_id and ins.idx = ok.idx)
       select v.n, v.run_status as status, v.run_attempt as attempt,
         exists (select 1 from ins where ins.run_id = v.run_id and ins.idx = v.idx) as inserted
       from v order by v.n`,
      [
        JSON.stringify(
          members.map((m, n) => ({
            ...recordJson(m, n),
            tool: m.tool,
            default_policy: m.defaultPolicy,
            fingerprint: m.fingerprint,
            outcome_enc: m.outcomeEnc,
            at: m.at,
            op_id: m.operation.id,
            execution_id: m.operation.executionId,
            chat_id: m.operation.chatId,
            op_args: m.operation.argsEnc,
            started_at: m.operation.startedAt,
            op_status: m.operation.status,
            op_result: m.operation.resultEnc,
            op_reason: m.operation.errorReason,
            finished_at: m.operation.finishedAt,
          })),
        ),
        // The runs again as an array: `= any(…)` finds them by index (see recordCalls).
        [...new Set(members.map((m) => m.runId))],
      ],
    );
    return writtenOf(rows, members.length).map(({ written }) => written);
  },
};

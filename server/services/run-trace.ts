/**
 * A run's trace (server/telemetry.ts): the run's W3C trace context lives on its row (`traceparent`, made on
 * first use), so every attempt on any instance and every nested call is a child of one root span, which
 * the instance that settles the run records with the id named beforehand. Attributes say what happened
 * (binding, connection, call index, outcome kind, error reason, duration) and never carry arguments,
 * results, vault values or tokens, unless an admin turned `codeMode.traceArguments` on: then the
 * arguments are added as sent, with every vault secret redacted by the gateway's redaction.
 */
import "server-only";
import type { RunTicket } from "@/contracts/code-run";
import type { CallOutcome } from "@/contracts/engine";
import type { ToolEntry } from "../apps/registry";
import type { Platform } from "../platform";
import { readSettings } from "./settings";

/** The run's trace context, stored on its row the first time a traced part of it needs one. */
async function runTraceparent(platform: Platform, runId: string): Promise<string | null> {
  const { db, telemetry } = platform;
  const row = (
    await db.query<{ traceparent: string | null }>("select traceparent from code_runs where id = $1", [runId])
  )[0];
  if (!row) return null;
  if (row.traceparent) return row.traceparent;
  const made = await db.query<{ traceparent: string }>(
    "update code_runs set traceparent = coalesce(traceparent, $2) where id = $1 returning traceparent",
    [runId, telemetry.newTraceparent()],
  );
  return made[0]?.traceparent ?? null;
}

export interface CallTrace {
  /** For `_meta` of every MCP request of the call. */
  meta: { traceparent: string; tracestate?: string };
  end(outcome: CallOutcome): void;
}

/**
 * A span for one App operation (a nested call of a run, or a direct call: its own trace). `sentArgs`
 * gives the arguments as sent, already redacted; it is read only when the admin setting is on. Without
 * it the call was not sent (see `traceRefusedCall`).
 */
export async function traceCall(
  platform: Platform,
  call: { runId: string | null; index: number | null; entry: ToolEntry },
  sentArgs: (() => string) | null,
): Promise<CallTrace | null> {
  if (!platform.telemetry.enabled) return null;
  const parent = call.runId ? await runTraceparent(platform, call.runId) : null;
  const span = platform.telemetry.start(`app_call ${call.entry.binding}`, parent, {
    "openbot.call.binding": call.entry.binding,
    "openbot.call.kind": call.entry.kind,
    "openbot.connection.id": call.entry.connectionId,
    "openbot.call.replayed": false,
    "openbot.call.sent": sentArgs !== null,
    ...(call.runId ? { "openbot.run.id": call.runId } : {}),
    ...(call.index !== null ? { "openbot.call.index": call.index } : {}),
    "openbot.instance.id": platform.instanceId,
  });
  if (!span) return null;
  if (sentArgs && (await readSettings(platform.db)).codeMode.traceArguments)
    span.set({ "openbot.call.arguments": sentArgs() });
  return {
    meta: { traceparent: span.traceparent, ...(span.tracestate ? { tracestate: span.tracestate } : {}) },
    end(outcome) {
      if (outcome.type === "ok") {
        span.set({ "openbot.call.outcome": "ok" });
        span.end();
        return;
      }
      const reason = (outcome.details as { reason?: unknown } | undefined)?.reason;
      span.set({
        "openbot.call.outcome": outcome.name,
        ...(typeof reason === "string" ? { "openbot.call.error_reason": reason } : {}),
      });
      span.end(outcome.name);
    },
  };
}

/**
 * The span of a nested call that was not sent: refused by the gateway's check (the policy, the vault rule),
 * denied by the person deciding, or by the policy stored when it was allowed. The trace shows the call and
 * why it got no answer from the App; no arguments (nothing was sent).
 */
export async function traceRefusedCall(
  platform: Platform,
  call: { runId: string; index: number; entry: ToolEntry | undefined },
  outcome: CallOutcome,
): Promise<void> {
  if (!platform.telemetry.enabled || !call.entry) return;
  const entry = call.entry;
  (await traceCall(platform, { runId: call.runId, index: call.index, entry }, null))?.end(outcome);
}

/** A span for one attempt of a run on this instance's runner, around `work` (the runner's outcome). */
export async function traceAttempt<T extends { status: string; reason?: string }>(
  platform: Platform,
  ticket: Pick<RunTicket, "runId" | "attempt">,
  work: () => Promise<T>,
): Promise<T> {
  if (!platform.telemetry.enabled) return work();
  const parent = await runTraceparent(platform, ticket.runId);
  const span = platform.telemetry.start("run_attempt", parent, {
    "openbot.run.id": ticket.runId,
    "openbot.run.attempt": ticket.attempt,
    "openbot.instance.id": platform.instanceId,
  });
  try {
    const outcome = await work();
    span?.set({ "openbot.attempt.outcome": outcome.status });
    span?.end(outcome.status === "failed" ? (outcome.reason ?? "failed") : undefined);
    return outcome;
  } catch (error) {
    span?.end("runner_error");
    throw error;
  }
}

/**
 * Records each run's root span when this instance settles the run: from its creation to now, with a
 * child span per decision it waited for (asked → decided).
 */
export function traceRunEnds(platform: Platform): void {
  const { db, events, telemetry } = platform;
  if (!telemetry.enabled) return;
  events.on("run-settled", ({ runId }) =>
    platform.track(
      (async () => {
        const run = (
          await db.query<{
            traceparent: string | null;
            status: string;
            created_at: string;
            host: string;
            attempt: number;
          }>("select traceparent, status, created_at, host, attempt from code_runs where id = $1", [runId])
        )[0];
        const traceparent = run ? (run.traceparent ?? (await runTraceparent(platform, runId))) : null;
        if (!run || !traceparent) return;
        const span = telemetry.record(
          "code_run",
          traceparent,
          { "openbot.run.id": runId, "openbot.run.status": run.status, "openbot.run.attempts": run.attempt },
          Number(run.created_at),
        );
        const waits = await db.query<{ created_at: string; decided_at: string | null; status: string }>(
          "select created_at, decided_at, status from decisions where run_id = $1 order by created_at",
          [runId],
        );
        for (const w of waits) {
          const wait = telemetry.start(
            "decision_wait",
            span?.traceparent ?? null,
            { "openbot.decision.status": w.status },
            Number(w.created_at),
          );
          wait?.end(undefined, w.decided_at ? Number(w.decided_at) : undefined);
        }
        span?.end(run.status === "Completed" ? undefined : run.status);
      })(),
    ),
  );
}

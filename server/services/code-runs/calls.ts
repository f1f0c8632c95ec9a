/**
 * One nested call of a running program: the journal says what it gets from the record (`decideCall`); a
 * new call passes the gateway's check (app-calls.ts); a call that needs a person becomes a decision
 * (decisions.ts) and pauses; a call that may go is sent through the gateway and its outcome recorded.
 */
import "server-only";
import type { CallRequest, HostCallAnswer } from "@/contracts/engine";
import { checkCall, performAppCall } from "../app-calls";
import { requirePermission } from "../auth";
import type { ServiceContext } from "../context";
import { requestDecision } from "../decisions";
import { traceRefusedCall } from "../run-trace";
import { awaitDecision, decideCall, recordOutcome } from "./journal";
import { readAtOnce } from "./reads";
import { beginRecording } from "./recording";
import { open } from "./rows";

/**
 * One nested call of a running program. The answer is the call's outcome (sent now or replayed from
 * the record), a pause for a decision, or a stop. `firstNew`: the attempt's host knows the record had no
 * index from this one on when the attempt began (runs.ts): a read-only call there may take the fast path.
 */
export async function handleCall(
  ctx: ServiceContext,
  runId: string,
  attempt: number,
  call: CallRequest,
  firstNew?: number,
): Promise<HostCallAnswer> {
  const recorded = beginRecording(ctx.platform, runId);
  try {
    return await handleRecordedCall(ctx, runId, attempt, call, firstNew, recorded);
  } finally {
    recorded();
  }
}

/** handleCall's steps; `sending` says the call is out of its recording (sent to its App: recording.ts). */
async function handleRecordedCall(
  ctx: ServiceContext,
  runId: string,
  attempt: number,
  call: CallRequest,
  firstNew: number | undefined,
  sending: () => void,
): Promise<HostCallAnswer> {
  if (firstNew !== undefined && call.index >= firstNew) {
    const answered = await readAtOnce(ctx, runId, attempt, call);
    if (answered) return answered;
  }
  const step = await decideCall(ctx, runId, attempt, call);
  if (step.type === "answer") return step.outcome;
  if (step.type !== "send") return step;
  const { run, entry, argsJson } = step;
  const principal = requirePermission(ctx.principal, "apps.use");
  if (step.fresh) {
    const check = await checkCall(ctx.platform, principal, entry, argsJson, {
      runId: run.id,
      chatId: run.chat_id,
      index: call.index,
      policies: step.policies,
    });
    if (check.verdict === "refuse") {
      await traceRefusedCall(ctx.platform, { runId, index: call.index, entry }, check.outcome);
      return recordOutcome(ctx, runId, call.index, check.outcome, check.rejection);
    }
    if (check.verdict === "ask") {
      const code = open<string>(ctx, "code_runs", run.id, "code", run.code_enc);
      const toolCallId = run.call_id ?? run.id;
      const decisionId = await requestDecision(ctx.platform, {
        chatId: run.chat_id,
        runId: run.id,
        index: call.index,
        toolCallId,
        callId: `${toolCallId}:${call.index}`,
        entry,
        argsJson,
        capability: check.capability,
        context: check.context,
        code,
      });
      await awaitDecision(ctx, run, call.index, decisionId);
      return { type: "pause" };
    }
  }
  // The operation's end and the call's outcome are one statement (`finish`), unless the App asked for
  // input or runs it as a task (parked: no end yet) or nothing was sent (a vault refusal): then the
  // outcome is recorded alone.
  let recorded = false;
  sending();
  const { outcome, parked } = await performAppCall(ctx.platform, {
    chatId: run.chat_id,
    runId: run.id,
    index: call.index,
    entry,
    argsJson,
    principal,
    tasks: true,
    ...(step.resume ? { resume: step.resume } : {}),
    finish: async (operation, ended) => {
      await recordOutcome(ctx, run.id, call.index, ended, null, operation);
      recorded = true;
    },
  });
  // Parked: the App runs it as a task (the poll job, tasks.ts, records the outcome), or it waits for a
  // person's input; no outcome yet, the run waits (no worker held) and is run again when it settles.
  if (parked) return { type: "pause" };
  return recorded ? outcome : recordOutcome(ctx, run.id, call.index, outcome, null);
}

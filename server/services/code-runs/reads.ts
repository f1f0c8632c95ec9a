/**
 * The read-only fast path of a nested call: a call whose loss changes nothing (a tool a built-in App
 * marks readOnlyHint), allowed by its policy at once, at an index the record cannot have yet, needs no
 * at-most-once guard. It is sent before anything is written, and its record, its App operation and its
 * outcome go in ONE statement after the answer (call-writes.ts `recordReads`), before the program sees
 * it. A host that dies mid-read leaves nothing: the re-run sends the read again.
 *
 * Everything else, and every case the statement refuses (the stored policy changed, the vault changed,
 * the index was recorded meanwhile), goes the ordinary way (journal.ts `decideCall`); a refused read's
 * answer is dropped unseen, so only the ordinary path's answer reaches the program.
 */
import "server-only";
import type { CallOutcome, CallRequest, HostCallAnswer } from "@/contracts/engine";
import { canonicalJson } from "@/worker/canonical-json";
import { isDiscoveryBinding } from "../../apps/discovery";
import type { ToolEntry } from "../../apps/registry";
import { sha256 } from "../../crypto";
import { batched } from "../../db/batch";
import { performAppCall } from "../app-calls";
import { checkAppCall } from "../capability";
import type { ServiceContext } from "../context";
import { AppError } from "../errors";
import { startOperations } from "../operation-writes";
import { isReadOnly } from "../taint";
import { cachedVaultFingerprint } from "../vault";
import { type CallRecord, type ReadWritten, recordCalls, recordReads, writtenStop } from "./call-writes";
import { recordOutcome } from "./journal";
import { runForCall, seal } from "./rows";

/** Same bound as the journal's (journal.ts MAX_ARGS_JSON): larger arguments go the ordinary way and are refused there. */
const MAX_ARGS_JSON = 3 * 1024 * 1024;

/**
 * Trusted to be read-only: a tool a built-in App marks readOnlyHint. (Resource and prompt reads are
 * reads too, but a run that heard untrusted content asks before them: they go the ordinary way.)
 */
function fastRead(ctx: ServiceContext, entry: ToolEntry): boolean {
  return entry.kind === "tool" && isReadOnly(entry) && ctx.platform.apps.isBuiltin(entry.connectionId);
}

/**
 * The call sent and recorded by the fast path, or undefined: it takes the ordinary way (nothing was
 * written; if a read was sent, its answer is dropped). `fresh`: the call's index is past every index the
 * record had when this attempt began (runs.ts), so the record cannot hold a decision or an operation for it.
 */
export async function readAtOnce(
  ctx: ServiceContext,
  runId: string,
  attempt: number,
  call: CallRequest,
): Promise<HostCallAnswer | undefined> {
  const { run, principal } = await runForCall(ctx, runId, attempt);
  if (run.status !== "Running" && run.status !== "Waiting") return undefined;
  if (call.argsJson.length > MAX_ARGS_JSON || isDiscoveryBinding(call.binding)) return undefined;
  if (!(JSON.parse(run.bindings) as string[]).includes(call.binding)) return undefined;
  const entry = ctx.platform.apps.resolve(call.binding);
  if (!entry || !fastRead(ctx, entry)) return undefined;
  // Allowed at once: apps.use, the policy as this instance knows it (the statement checks the stored
  // one), no vault reference (a reference always asks). A read-only tool meets no taint rule.
  if (checkAppCall(principal, entry, call.argsJson).verdict !== "allow") return undefined;
  const fingerprint = cachedVaultFingerprint(ctx.platform);
  if (fingerprint === undefined) return undefined;
  let argsJson: string;
  try {
    argsJson = canonicalJson(call.argsJson);
  } catch {
    return undefined; // the ordinary way answers why
  }
  const digest = sha256(`${call.binding}\n${argsJson}`);
  const source = JSON.stringify({
    connectionId: entry.connectionId,
    connectionName: entry.connectionName,
    name: entry.name,
  });
  const argsEnc = seal(ctx, "code_run_calls", `${runId}:${call.index}`, "args", argsJson);
  // The call's record as both ways write it: alone when the App parks the call, with its outcome otherwise.
  const record: CallRecord = {
    runId,
    index: call.index,
    binding: call.binding,
    source,
    argsEnc,
    digest,
    createdAt: Date.now(),
    attempt,
    connectionId: entry.connectionId,
  };
  let started = false;
  let written: ReadWritten | undefined;
  const { outcome, parked } = await performAppCall(ctx.platform, {
    chatId: run.chat_id,
    runId,
    index: call.index,
    entry,
    argsJson,
    principal,
    tasks: true,
    deferred: {
      fingerprint,
      // The App parks the call (a task, a question): its record and its operation's start first, as on
      // the ordinary path, so the park has its rows.
      async start(start) {
        const now = await batched(ctx.platform.db, recordCalls, record);
        if (!now.inserted) throw new AppError("CONFLICT", `Call ${call.index} of run ${runId} could not be recorded.`);
        await batched(ctx.platform.db, startOperations, start);
        started = true;
      },
    },
    finish: async (operation, ended: CallOutcome, start) => {
      if (started) {
        await recordOutcome(ctx, runId, call.index, ended, null, operation);
        written = { status: run.status, attempt, inserted: true };
        return;
      }
      written = await batched(ctx.platform.db, recordReads, {
        ...record,
        tool: entry.name,
        defaultPolicy: entry.defaultPolicy,
        fingerprint,
        outcomeEnc: seal(ctx, "code_run_calls", `${runId}:${call.index}`, "outcome", ended),
        at: Date.now(),
        operation: {
          id: operation.id,
          executionId: start.executionId,
          chatId: run.chat_id,
          argsEnc: start.argsEnc,
          startedAt: start.startedAt,
          status: operation.status,
          resultEnc: operation.resultEnc,
          errorReason: operation.errorReason,
          finishedAt: operation.finishedAt,
        },
      });
    },
  });
  if (parked) return { type: "pause" };
  if (!written) return undefined;
  if (written.inserted) {
    if (!started) ctx.platform.events.emit("run", { runId });
    return outcome;
  }
  return writtenStop(written, attempt);
}

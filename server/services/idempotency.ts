/**
 * `Idempotency-Key` for API run starts (`POST /v1/chats/:chatId/code-runs`): the first request with a key
 * claims it, and every retry with the same key and the same request gets the record of the run the first
 * one made (as it is now), never a second run. The same key with a different request is a 409. Keys are
 * per person, stored as hashes, and answer for a day (KEY_TTL_MS); a claim whose request died before making
 * its run is taken over after STALE_CLAIM_MS.
 */
import "server-only";
import type { CodeRunRecord, StartRunInput } from "@/contracts/code-run";
import { canonicalJson } from "@/worker/canonical-json";
import { sha256 } from "../crypto";
import { isStorageUnavailable } from "../db/client";
import { logFailure } from "../log";
import { requirePermission } from "./auth";
import { getRun } from "./code-runs/records";
import { runOnServer } from "./code-runs/runs";
import type { ServiceContext } from "./context";
import { AppError, isAppError } from "./errors";

const KEY = /^[\x21-\x7e]{1,200}$/;
/** How long a retry waits for the first request to have made its run. */
const CLAIM_WAIT_MS = 10_000;
/**
 * A claim that made no run in this long was left by a request that died before writing it (a live one writes
 * its run within a statement or two of the claim): the next request with the key takes it over.
 */
export const STALE_CLAIM_MS = 60_000;
/** How long a key answers with its run; after that the key is free again (as with common payment APIs). */
export const KEY_TTL_MS = 24 * 60 * 60 * 1000;

export async function runOnServerOnce(
  ctx: ServiceContext,
  input: StartRunInput,
  idempotencyKey: string | null,
): Promise<CodeRunRecord> {
  if (idempotencyKey === null) {
    let runId: string | undefined;
    try {
      return await runOnServer(ctx, input, {
        onCreated: (id) => {
          runId = id;
        },
      });
    } catch (error) {
      if (isAppError(error)) throw error;
      if (runId === undefined) throw noRunMade(error);
      return answerForStartedRun(ctx, runId, error);
    }
  }
  const p = requirePermission(ctx.principal, "apps.use");
  if (!KEY.test(idempotencyKey)) {
    throw new AppError("BAD_REQUEST", "Idempotency-Key: 1 to 200 visible ASCII characters.", {
      fields: [{ field: "Idempotency-Key", message: "1 to 200 visible ASCII characters" }],
    });
  }
  const { db } = ctx.platform;
  const keyHash = sha256(idempotencyKey);
  const requestHash = sha256(canonicalJson(JSON.stringify(input ?? null)));
  const now = Date.now();
  const claimed = await db.query(
    `insert into idempotency_keys (user_id, key_hash, request_hash, run_id, created_at) values ($1, $2, $3, null, $4)
     on conflict (user_id, key_hash) do update
       set request_hash = excluded.request_hash, run_id = null, created_at = excluded.created_at
       where idempotency_keys.created_at < $5 or (idempotency_keys.run_id is null and idempotency_keys.created_at < $6)
     returning key_hash`,
    [p.userId, keyHash, requestHash, now, now - KEY_TTL_MS, now - STALE_CLAIM_MS],
  );
  if (claimed.length === 0) return earlierRun(ctx, p.userId, keyHash, requestHash);
  let started: string | undefined;
  try {
    return await runOnServer(ctx, input, {
      onCreated: (runId) => {
        started = runId;
      },
      idempotencyKey: { userId: p.userId, keyHash },
    });
  } catch (error) {
    // Refused before a run existed (bad input, a full queue): the key is free for the corrected retry.
    if (started === undefined) {
      await db
        .query(
          "delete from idempotency_keys where user_id = $1 and key_hash = $2 and run_id is null and created_at = $3",
          [p.userId, keyHash, now],
        )
        .catch(() => undefined);
      throw isAppError(error) ? error : noRunMade(error);
    }
    if (isAppError(error)) throw error;
    return answerForStartedRun(ctx, started, error);
  }
}

/**
 * The database failed before the run's row existed: nothing was made, so the request may be sent again
 * (503). Anything else is a bug and stays an internal error.
 */
function noRunMade(error: unknown): unknown {
  if (!isStorageUnavailable(error)) return error;
  const errorId = logFailure("code_run_start_failed", error);
  return new AppError(
    "UNAVAILABLE",
    `The database is unavailable right now, so no run was made (${errorId}); send the request again.`,
    { errorId, retryable: true },
  );
}

/**
 * A storage error after the run was made (the run goes on: its host or, if that dies, the sweep ends it)
 * is answered with the run, never a bare 500 a client would retry into a second run: its record when it
 * can be read again, else UNAVAILABLE (503) naming the run's id and its last known state.
 */
async function answerForStartedRun(ctx: ServiceContext, runId: string, cause: unknown): Promise<CodeRunRecord> {
  const errorId = logFailure("code_run_answer_failed", cause, { runId });
  const record = await getRun(ctx, runId).catch(() => undefined);
  if (record) return record;
  throw new AppError(
    "UNAVAILABLE",
    `Run ${runId} started, but its state could not be stored or read (${errorId}); it goes on. Read it with GET /v1/code-runs/${runId}.`,
    { runId, status: "Running", errorId },
  );
}

async function earlierRun(ctx: ServiceContext, userId: string, keyHash: string, requestHash: string) {
  const deadline = Date.now() + CLAIM_WAIT_MS;
  for (;;) {
    const row = (
      await ctx.platform.db.query<{ request_hash: string; run_id: string | null }>(
        "select request_hash, run_id from idempotency_keys where user_id = $1 and key_hash = $2",
        [userId, keyHash],
      )
    )[0];
    if (!row) throw new AppError("CONFLICT", "The request with this Idempotency-Key was refused; send it again.");
    if (row.request_hash !== requestHash) {
      throw new AppError("CONFLICT", "This Idempotency-Key was used for a different request.");
    }
    if (row.run_id) return getRun(ctx, row.run_id);
    if (Date.now() > deadline) {
      throw new AppError("CONFLICT", "The request with this Idempotency-Key is still starting; retry in a moment.");
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

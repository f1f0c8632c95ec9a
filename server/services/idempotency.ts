/**
 * `Idempotency-Key` for API run starts (`POST /v1/chats/:chatId/code-runs`): the first request with a key
 * claims it, and every retry with the same key and the same request gets the record of the run the first
 * one made (as it is now), never a second run. The same key with a different request is a 409. Keys are
 * per person and stored as hashes.
 */
import "server-only";
import type { CodeRunRecord, StartRunInput } from "@/contracts/code-run";
import { canonicalJson } from "@/worker/canonical-json";
import { sha256 } from "../crypto";
import { requirePermission } from "./auth";
import { getRun } from "./code-runs/records";
import { runOnServer } from "./code-runs/runs";
import type { ServiceContext } from "./context";
import { AppError } from "./errors";

const KEY = /^[\x21-\x7e]{1,200}$/;
/** How long a retry waits for the first request to have made its run. */
const CLAIM_WAIT_MS = 10_000;

export async function runOnServerOnce(
  ctx: ServiceContext,
  input: StartRunInput,
  idempotencyKey: string | null,
): Promise<CodeRunRecord> {
  if (idempotencyKey === null) return runOnServer(ctx, input);
  const p = requirePermission(ctx.principal, "apps.use");
  if (!KEY.test(idempotencyKey)) {
    throw new AppError("BAD_REQUEST", "Idempotency-Key: 1 to 200 visible ASCII characters.", {
      fields: [{ field: "Idempotency-Key", message: "1 to 200 visible ASCII characters" }],
    });
  }
  const { db } = ctx.platform;
  const keyHash = sha256(idempotencyKey);
  const requestHash = sha256(canonicalJson(JSON.stringify(input ?? null)));
  const claimed = await db.query(
    `insert into idempotency_keys (user_id, key_hash, request_hash, run_id, created_at) values ($1, $2, $3, null, $4)
     on conflict do nothing returning key_hash`,
    [p.userId, keyHash, requestHash, Date.now()],
  );
  if (claimed.length === 0) return earlierRun(ctx, p.userId, keyHash, requestHash);
  let started = false;
  try {
    return await runOnServer(ctx, input, {
      onStarted: async (runId) => {
        started = true;
        await db.query("update idempotency_keys set run_id = $3 where user_id = $1 and key_hash = $2", [
          p.userId,
          keyHash,
          runId,
        ]);
      },
    });
  } catch (error) {
    // Refused before a run existed (bad input, a full queue): the key is free for the corrected retry.
    if (!started)
      await db.query("delete from idempotency_keys where user_id = $1 and key_hash = $2", [p.userId, keyHash]);
    throw error;
  }
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

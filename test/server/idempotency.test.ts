/**
 * `Idempotency-Key` of `POST /v1/chats/:id/code-runs` (runOnServerOnce) against the platform's real database:
 * the key is linked by the statement that writes the run (a request that dies right after cannot leave it
 * "starting" for ever), a claim left by a request that died before its run is taken over after a minute, a
 * live claim is waited for, and a key answers for a day, then is free again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256 } from "@/server/crypto";
import type { Db } from "@/server/db/client";
import { toPublicError } from "@/server/http/public-error";
import { KEY_TTL_MS, runOnServerOnce, STALE_CLAIM_MS } from "@/server/services/idempotency";
import { canonicalJson } from "@/worker/canonical-json";
import { startTestPlatform, type TestPlatform } from "../helpers/platform";

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform({ codeMode: true });
});
afterAll(() => t?.close());

const CODE = "return 6 * 7";

async function setup(title: string) {
  const chat = await t.caller(t.admin).chats.create({ title });
  const ctx = { platform: t.platform, principal: t.admin };
  const runs = async () => (await t.caller(t.admin).codeRuns.listByChat({ chatId: chat.id })).map((r) => r.id);
  return { chat, ctx, runs };
}

/** A stored claim of `key` by the admin, as a request would have left it. */
async function storeClaim(key: string, request: unknown, createdAt: number, runId: string | null) {
  await t.platform.db.query(
    "insert into idempotency_keys (user_id, key_hash, request_hash, run_id, created_at) values ($1, $2, $3, $4, $5)",
    [t.admin.userId, sha256(key), sha256(canonicalJson(JSON.stringify(request))), runId, createdAt],
  );
}

/** Every statement after the run's insert fails, as if the process died right after writing it. */
function dieAfterRunInsert(db: Db): () => void {
  const query = db.query;
  let written = false;
  db.query = ((sql: string, params?: unknown[]) => {
    if (written) return Promise.reject(new Error("connection terminated unexpectedly"));
    if (sql.includes("insert into code_runs")) written = true;
    return query(sql, params);
  }) as Db["query"];
  return () => {
    db.query = query;
  };
}

describe("Idempotency-Key", () => {
  it("is linked to the run by the statement that writes it: a retry after the first request died there gets that run", async () => {
    const { chat, ctx, runs } = await setup("Died after insert");
    const heal = dieAfterRunInsert(t.platform.db);
    const first = await runOnServerOnce(ctx, { chatId: chat.id, code: CODE }, "died-after-insert").then(
      () => "answered",
      () => "failed",
    );
    heal();
    expect(first).toBe("failed");
    const made = await runs();
    expect(made).toHaveLength(1);
    const started = Date.now();
    const again = await runOnServerOnce(ctx, { chatId: chat.id, code: CODE }, "died-after-insert");
    expect(again.id).toBe(made[0]);
    // Answered from the link, not after waiting out the claim.
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await runs()).toEqual(made);
  });

  it("a claim that made no run for over a minute is taken over: the retry makes the run", async () => {
    const { chat, ctx, runs } = await setup("Stale claim");
    const input = { chatId: chat.id, code: CODE };
    await storeClaim("stale-claim", input, Date.now() - STALE_CLAIM_MS - 1000, null);
    const record = await runOnServerOnce(ctx, input, "stale-claim");
    expect(record.status).toBe("Completed");
    expect(await runs()).toEqual([record.id]);
    expect((await runOnServerOnce(ctx, input, "stale-claim")).id).toBe(record.id);
  });

  it("a live claim is not taken over: the retry waits for the first request's run", async () => {
    const { chat, ctx, runs } = await setup("Live claim");
    const input = { chatId: chat.id, code: CODE };
    const earlier = await runOnServerOnce(ctx, input, null);
    await storeClaim("live-claim", input, Date.now() - 5000, null);
    const retry = runOnServerOnce(ctx, input, "live-claim");
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The first request writes its run now.
    await t.platform.db.query("update idempotency_keys set run_id = $2 where key_hash = $1", [
      sha256("live-claim"),
      earlier.id,
    ]);
    expect((await retry).id).toBe(earlier.id);
    expect(await runs()).toEqual([earlier.id]);
  });

  it("answers for a day; after that the key is free for a new request", async () => {
    const { chat, ctx, runs } = await setup("Expiry");
    const old = await runOnServerOnce(ctx, { chatId: chat.id, code: CODE }, null);
    const other = { chatId: chat.id, code: "return 1" };
    await storeClaim("day-old", { chatId: chat.id, code: CODE }, Date.now() - KEY_TTL_MS + 60_000, old.id);
    const refused = await runOnServerOnce(ctx, other, "day-old").catch((e: unknown) => toPublicError(e, "test"));
    expect(refused).toMatchObject({
      code: "CONFLICT",
      message: "This Idempotency-Key was used for a different request.",
    });
    await storeClaim("expired", { chatId: chat.id, code: CODE }, Date.now() - KEY_TTL_MS - 1000, old.id);
    const fresh = await runOnServerOnce(ctx, other, "expired");
    expect(fresh.id).not.toBe(old.id);
    expect(fresh.status).toBe("Completed");
    expect((await runOnServerOnce(ctx, other, "expired")).id).toBe(fresh.id);
    expect((await runs()).sort()).toEqual([old.id, fresh.id].sort());
  });
});

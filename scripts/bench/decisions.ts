/**
 * `npm run bench:decisions`: decision round trips and re-runs, measured on a real platform in this
 * process (embedded database in memory, the built-in Email and Notes apps over MCP, the Node sandbox
 * runner), through the same tRPC procedures the UI calls. A round trip is one answer of a run's card
 * (one `decisions.decideMany` with every call that waits); a re-run is one more attempt of the program.
 *   - 20 parallel writes (Promise.all): goal 1 round trip and 1 re-run;
 *   - 20 sequential writes without a grant: 20 and 20 (each write is only issued after the previous one);
 *   - 20 sequential writes with "allow for this run": needs remembered grants (`remember` on an answer);
 *   - the time of the re-run after one decision when the record already holds N = 100 and 1000 calls.
 * Informational: the exit code is 0 unless the bench itself could not run. Run `node scripts/build-worker.mjs` first.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { decisionAnswer } from "@/contracts/decisions";
import { appRouter } from "@/server/api/root";
import { createContextInner } from "@/server/api/trpc";
import { bootPlatform } from "@/server/boot";
import { readEnv } from "@/server/env";
import { principalFromToken } from "@/server/services/auth";

const ADMIN_TOKEN = "obk_bench-decisions-admin-token-0123";
const dataDir = mkdtempSync(path.join(os.tmpdir(), "openbot-bench-decisions-"));
const platform = await bootPlatform({
  env: readEnv({ OPENBOT_DATA_DIR: dataDir, OPENBOT_ADMIN_TOKEN: ADMIN_TOKEN }),
  inMemoryDb: true,
});

try {
  const admin = await principalFromToken(platform.db, ADMIN_TOKEN);
  if (!admin) throw new Error("no admin principal");
  const caller = appRouter.createCaller(createContextInner(platform, admin));
  const settings = await caller.settings.get();
  await caller.settings.update({
    expectedVersion: settings.version,
    codeMode: { enabled: true, maxPendingCalls: 16, timeoutMs: 60_000 },
  });

  const attemptOf = async (runId: string) =>
    (await platform.db.query<{ attempt: number }>("select attempt from code_runs where id = $1", [runId]))[0]
      ?.attempt ?? 0;

  /** Runs `code`, answers each card it shows with `answer` until it ends; counts round trips and re-runs. */
  async function measure(code: string, answer: Record<string, unknown> = { decision: "allow" }) {
    const chat = await caller.chats.create({});
    const record = await caller.codeRuns.runOnServer({ chatId: chat.id, code, reason: "bench" });
    let roundTrips = 0;
    let rerunMs = 0;
    for (let guard = 0; guard < 100; guard++) {
      const run = await caller.codeRuns.byId({ id: record.id });
      if (run.status !== "Waiting") break;
      const pending = await caller.decisions.list({ runId: record.id, status: "pending" });
      if (pending.length === 0) {
        await platform.settled();
        continue;
      }
      const started = performance.now();
      await caller.decisions.decideMany({
        items: pending.map((d) => ({ id: d.id, ...answer }) as { id: string; decision: "allow" }),
      });
      roundTrips++;
      await platform.settled();
      rerunMs = performance.now() - started;
    }
    const done = await caller.codeRuns.byId({ id: record.id });
    return { status: done.status, roundTrips, reruns: (await attemptOf(record.id)) - 1, lastRerunMs: rerunMs };
  }

  const send = (i: string) =>
    `apps.email.send_email({ to: "b" + ${i} + "@example.com", subject: "bench " + ${i}, body: "x" })`;
  const rows: [string, string, string, string][] = [];

  const parallel = await measure(
    `const ids = await Promise.all(Array.from({ length: 20 }, (_, i) => ${send("i")}))\nreturn ids.length`,
  );
  rows.push(["20 parallel writes", String(parallel.roundTrips), String(parallel.reruns), `1 / 1 (${parallel.status})`]);

  const sequential = `for (let i = 0; i < 20; i++) await ${send("i")}\nreturn 20`;
  const noGrant = await measure(sequential);
  rows.push([
    "20 sequential writes, no grant",
    String(noGrant.roundTrips),
    String(noGrant.reruns),
    `20 / 20 (${noGrant.status})`,
  ]);

  if ("remember" in decisionAnswer.shape) {
    const granted = await measure(sequential, { decision: "allow", remember: { scope: "run", match: "binding" } });
    rows.push([
      '20 sequential writes, "allow for this run"',
      String(granted.roundTrips),
      String(granted.reruns),
      `1 / 1 (${granted.status})`,
    ]);
  } else {
    rows.push(['20 sequential writes, "allow for this run"', "n/a: grants not on this branch", "", "1 / 1"]);
  }

  const header = ["workload", "round trips", "re-runs", "goal"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ");
  console.log(line(header));
  for (const r of rows) console.log(line(r));

  console.log("\nre-run after one decision with N recorded calls (N reads replayed, then the decided send):");
  for (const n of [100, 1000]) {
    const result = await measure(
      `const notes = await Promise.all(Array.from({ length: ${n} }, (_, i) => apps.notes.read_note({ id: i % 2 ? "note_seed_1" : "note_seed_2" })))
const sent = await ${send("0")}
return notes.length`,
    );
    console.log(
      `  N = ${String(n).padStart(4)}: ${result.lastRerunMs.toFixed(0)} ms (decision to ${result.status}, ${result.roundTrips} round trip, ${result.reruns} re-run)`,
    );
  }
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await platform.close();
  rmSync(dataDir, { recursive: true, force: true });
}

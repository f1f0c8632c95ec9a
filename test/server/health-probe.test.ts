/**
 * `/v1/health` readiness never queues behind the database: with hundreds of statements waiting on PGlite's
 * one connection, it answers from the background probe's last result (`up`, with its age) before the
 * queue is through, where it used to wait for its own `select 1` (and then say `busy`). No clock in the
 * assertion: only which finished first.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readiness } from "@/server/health";
import { startTestPlatform, type TestPlatform } from "../helpers/platform";

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform();
});
afterAll(() => t?.close());

describe("readiness under a full statement queue", () => {
  it("answers from the last probe, before the queued statements are done", async () => {
    expect((await readiness(t.platform)).database.state).toBe("up");
    let queueDone = false;
    const queue = Promise.all(
      Array.from({ length: 300 }, () => t.platform.db.query("select count(*) from generate_series(1, 20000)")),
    ).then(() => {
      queueDone = true;
    });
    const ready = await readiness(t.platform);
    const answeredFirst = !queueDone;
    await queue;
    expect(answeredFirst).toBe(true);
    expect(ready.ok).toBe(true);
    expect(ready.database.state).toBe("up");
    expect(ready.database.probeAgeMs).toBeGreaterThanOrEqual(0);
    expect(ready.pool.waiting).toBeGreaterThan(0);
  });
});

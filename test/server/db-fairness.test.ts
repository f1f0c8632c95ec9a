/**
 * PGlite's one connection runs queued statements one after another; they must not starve the event loop:
 * I/O that arrives while hundreds of statements are queued (a health check, a sandbox worker's message,
 * a new request) is taken between them, not after the last one. No clock in the assertion: a callback
 * queued for the event loop's next turn must run while statements are still waiting.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Db, openDb } from "@/server/db/client";

let db: Db;
beforeAll(async () => {
  db = await openDb({});
});
afterAll(() => db?.close());

describe("PGlite statement queue", () => {
  it("lets the event loop take its turn while statements are queued", async () => {
    const total = 200;
    let finished = 0;
    const queries = Array.from({ length: total }, () =>
      db.query("select count(*) from generate_series(1, 20000)").then(() => {
        finished += 1;
      }),
    );
    const seenAt = new Promise<number>((resolve) => setImmediate(() => resolve(finished)));
    await Promise.all(queries);
    expect(await seenAt).toBeLessThan(total);
    expect(finished).toBe(total);
  });
});

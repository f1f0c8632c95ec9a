/**
 * PGlite runs in its own worker thread behind the same `Db`: the engine reports the thread it runs on,
 * errors come back as data with their SQLSTATE fields, a transaction still owns the one connection until
 * it ends, NOTIFY reaches listeners on the main thread, and a dead engine thread fails calls as a storage
 * error instead of leaving them waiting.
 */
import { threadId } from "node:worker_threads";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Db, isStorageUnavailable, openDb } from "@/server/db/client";
import { openPgliteThread, pgliteThreadOf } from "@/server/db/pglite-remote";

let db: Db;
beforeAll(async () => {
  db = await openDb({});
  await db.query("create table items (id int primary key, name text not null)");
});
afterAll(() => db?.close());

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error("expected the statement to fail");
    },
    (error: unknown) => error as Error & Record<string, unknown>,
  );

describe("PGlite on its own thread", () => {
  it("runs the engine on a worker thread, not the main thread", () => {
    const where = pgliteThreadOf(db);
    expect(where).toBeDefined();
    expect(where?.isMainThread).toBe(false);
    expect(where?.threadId).not.toBe(threadId);
  });

  it("does not zero-fill new WAL segments (pglite-local.ts: 16 MB of writes each)", async () => {
    expect(await db.query("show wal_init_zero")).toEqual([{ wal_init_zero: "off" }]);
  });

  it("keeps a statement error's SQLSTATE code and fields", async () => {
    await db.query("insert into items values (1, 'one')");
    const duplicate = await failure(db.query("insert into items values (1, 'again')"));
    expect(duplicate).toBeInstanceOf(Error);
    expect(duplicate.code).toBe("23505");
    expect(duplicate.constraint).toBe("items_pkey");
    expect(duplicate.message).toMatch(/duplicate key/);
    expect(isStorageUnavailable(duplicate)).toBe(false);
    const syntax = await failure(db.query("selec 1"));
    expect(syntax.code).toBe("42601");
    // Inside a transaction too; the throw rolls the transaction back.
    const inTx = await failure(
      db.transaction(async (tx) => {
        await tx.query("insert into items values (2, 'two')");
        await tx.query("insert into items values (1, 'again')");
      }),
    );
    expect(inTx.code).toBe("23505");
    expect(await db.query("select id from items order by id")).toEqual([{ id: 1 }]);
  });

  it("lets a transaction own the connection until it commits", async () => {
    const order: string[] = [];
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered: () => void = () => undefined;
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const tx = db.transaction(async (t) => {
      await t.query("insert into items values (3, 'three')");
      entered();
      await held;
      order.push("commit");
      return (await t.query<{ n: number }>("select count(*)::int as n from items"))[0]?.n;
    });
    await inside;
    const outside = db.query<{ n: number }>("select count(*)::int as n from items").then((rows) => {
      order.push("outside");
      return rows[0]?.n;
    });
    release();
    expect(await tx).toBe(2);
    expect(await outside).toBe(2);
    expect(order).toEqual(["commit", "outside"]);
    expect(db.stats().transactions).toBeGreaterThan(0);
  });

  it("delivers NOTIFY payloads to listeners on the main thread", async () => {
    const heard = new Promise<string>((resolve) => {
      void db.listen("thread_test", resolve);
    });
    await db.notify("thread_test", "hello from the thread");
    expect(await heard).toBe("hello from the thread");
  });

  it("fails waiting and later calls as a storage error when the engine thread dies", async () => {
    const doomed = await openDb({});
    const slow = failure(doomed.query("select pg_sleep(30)"));
    await pgliteThreadOf(doomed)?.kill();
    const error = await slow;
    expect(isStorageUnavailable(error)).toBe(true);
    expect(error.message).toMatch(/PGlite database thread is gone/);
    expect(isStorageUnavailable(await failure(doomed.query("select 1")))).toBe(true);
    expect(isStorageUnavailable(await failure(doomed.transaction(async () => undefined)))).toBe(true);
    await doomed.close();
  });

  it("names the missing thread bundle instead of failing later", async () => {
    await expect(openPgliteThread(undefined, "/nonexistent/pglite-thread.mjs")).rejects.toThrow(
      /pglite-thread\.mjs is missing: run `node scripts\/build-worker\.mjs`/,
    );
  });

  it("fails only the statement whose parameter cannot cross to the thread", async () => {
    const bad = failure(db.query("select $1::text as v", [{ toJSON: () => "x" }]));
    const good = db.query("select 'fine' as v");
    expect((await bad).message).toMatch(/cannot be sent to the database thread/);
    expect(await good).toEqual([{ v: "fine" }]);
  });
});

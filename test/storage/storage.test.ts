/**
 * The same storage tests on every engine (PGlite, and Postgres where one runs): migrations apply once,
 * transactions roll back, settings versions are atomic, and code, arguments and results are stored
 * encrypted — a marker used in all three is not in the database.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isStorageUnavailable, openDb } from "@/server/db/client";
import { migrate } from "@/server/db/migrate";
import { MIGRATIONS } from "@/server/db/migrations";
import { readSettings, writeSettings } from "@/server/services/settings";
import { BACKENDS } from "../helpers/databases";
import { startTestPlatform, type TestPlatform } from "../helpers/platform";

const postgres = BACKENDS.find((b) => b.name === "postgres");

describe.runIf(postgres)("Postgres connections", () => {
  it("an idle connection the server terminates is no uncaught error, and the next query reconnects", async () => {
    const fresh = await postgres!.fresh();
    const db = await fresh.open();
    try {
      await Promise.all([db.query("select 1"), db.query("select 2"), db.query("select 3")]);
      const admin = await openDb({ url: process.env.OPENBOT_TEST_DATABASE_URL });
      const name = new URL(fresh.url!).pathname.slice(1);
      const killed = await admin.query<{ ok: boolean }>(
        "select pg_terminate_backend(pid) as ok from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()",
        [name],
      );
      await admin.close();
      expect(killed.length).toBeGreaterThan(0);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await db.query<{ n: number }>("select 1 as n")).toEqual([{ n: 1 }]);
    } finally {
      await db.close();
      await fresh.drop();
    }
  });
});

describe.runIf(postgres)("Postgres connections lost mid-transaction", () => {
  it("the statement after the server ended the connection fails as storage unavailable (503), not as a bug", async () => {
    const fresh = await postgres!.fresh();
    const db = await fresh.open();
    const admin = await openDb({ url: process.env.OPENBOT_TEST_DATABASE_URL });
    try {
      const failure = await db
        .transaction(async (tx) => {
          const [row] = await tx.query<{ pid: number }>("select pg_backend_pid() as pid");
          await admin.query("select pg_terminate_backend($1)", [row!.pid]);
          await new Promise((resolve) => setTimeout(resolve, 200));
          await tx.query("select 1");
        })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      // node-postgres: "Client has encountered a connection error and is not queryable" (or a 57P01 first).
      expect(failure, "the transaction failed").toBeDefined();
      expect(isStorageUnavailable(failure), String(failure)).toBe(true);
      expect(await db.query<{ n: number }>("select 1 as n")).toEqual([{ n: 1 }]);
    } finally {
      await admin.close();
      await db.close();
      await fresh.drop();
    }
  });
});

describe.each(BACKENDS)("storage on $name", (backend) => {
  let fresh: Awaited<ReturnType<typeof backend.fresh>>;
  beforeAll(async () => {
    fresh = await backend.fresh();
  });
  afterAll(() => fresh?.drop());

  it("applies migrations once and keeps a record of them", async () => {
    const db = await fresh.open();
    try {
      expect(await migrate(db)).toEqual(MIGRATIONS.map((m) => m.id));
      expect(await migrate(db)).toEqual([]);
      const rows = await db.query<{ id: string }>("select id from schema_migrations order by id");
      expect(rows.map((r) => r.id)).toEqual(MIGRATIONS.map((m) => m.id));
    } finally {
      await db.close();
    }
  });

  it("rolls a failed transaction back", async () => {
    const db = await fresh.open();
    try {
      await migrate(db);
      await expect(
        db.transaction(async (tx) => {
          await tx.query("insert into users (id, name, role, created_at) values ('u-rollback', 'x', 'member', 1)");
          throw new Error("boom");
        }),
      ).rejects.toThrow("boom");
      expect(await db.query("select id from users where id = 'u-rollback'")).toEqual([]);
      await db.transaction((tx) =>
        tx.query("insert into users (id, name, role, created_at) values ('u-commit', 'x', 'member', 1)"),
      );
      expect(await db.query("select id from users where id = 'u-commit'")).toHaveLength(1);
    } finally {
      await db.close();
    }
  });

  it("versions settings atomically: of two writers at one version, one wins", async () => {
    const db = await fresh.open();
    try {
      await migrate(db);
      const admin = {
        userId: "u",
        userName: "a",
        role: "admin" as const,
        keyId: "k",
        permissions: new Set(["platform.admin" as const]),
      };
      const start = await readSettings(db);
      const results = await Promise.allSettled([
        writeSettings(db, admin, { expectedVersion: start.version, codeMode: { timeoutMs: 2000 } }),
        writeSettings(db, admin, { expectedVersion: start.version, codeMode: { timeoutMs: 3000 } }),
      ]);
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      expect((await readSettings(db)).version).toBe(start.version + 1);
    } finally {
      await db.close();
    }
  });

  describe("a whole platform", () => {
    let t: TestPlatform;
    const MARKER = "MARKER-7f3a9c-secret-looking-text";
    beforeAll(async () => {
      t = await startTestPlatform({ inMemoryDb: true, env: fresh.url ? { DATABASE_URL: fresh.url } : {} });
    });
    afterAll(() => t?.close());

    it("stores code, arguments and results encrypted", async () => {
      const caller = t.caller(t.admin);
      const s = await caller.settings.get();
      await caller.settings.update({ expectedVersion: s.version, codeMode: { enabled: true } });
      const chat = await caller.chats.create({});
      const record = await caller.codeRuns.runOnServer({
        chatId: chat.id,
        reason: `reason ${MARKER}`,
        code: `let r
try { r = await apps.work_calendar.list_events({ day: "${MARKER}" }) } catch (e) { r = e.message }
console.log("${MARKER}")
return { echo: "${MARKER}", r }`,
      });
      expect(record.status).toBe("Completed");
      expect(JSON.stringify(record)).toContain(MARKER);
      const tables = ["code_runs", "code_run_calls", "app_operations"];
      for (const table of tables) {
        const rows = await t.platform.db.query(`select * from ${table}`);
        expect(rows.length, table).toBeGreaterThan(0);
        expect(JSON.stringify(rows), table).not.toContain(MARKER);
        // A program call's App operation keeps no copy: its arguments and result are sealed on the call.
        if (table !== "app_operations") expect(JSON.stringify(rows), table).toContain("enc1:");
      }
    });
  });
});

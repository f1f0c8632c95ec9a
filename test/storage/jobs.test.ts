/**
 * Durable jobs (server/jobs.ts) and the cross-instance bus (server/cluster.ts) on PGlite and, when
 * OPENBOT_TEST_DATABASE_URL is set, on Postgres: two "instances" on one database.
 */
import { afterEach, describe, expect, it } from "vitest";
import { joinCluster } from "@/server/cluster";
import type { Db } from "@/server/db/client";
import { migrate } from "@/server/db/migrate";
import { EventBus } from "@/server/events";
import { Jobs } from "@/server/jobs";
import { BACKENDS, openFresh } from "../helpers/databases";

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!().catch(() => undefined);
});

async function freshDb(backend: (typeof BACKENDS)[number]): Promise<Db> {
  const db = await openFresh(backend, cleanup);
  await migrate(db);
  return db;
}

/** Two instances' event buses joined in a cluster on one fresh database (closed after the test). */
async function twoInstances(backend: (typeof BACKENDS)[number]) {
  const db = await freshDb(backend);
  const a = new EventBus();
  const b = new EventBus();
  const ca = await joinCluster(db, a, "inst_a");
  const cb = await joinCluster(db, b, "inst_b");
  cleanup.push(
    () => ca.close(),
    () => cb.close(),
  );
  return { db, a, b, cb };
}

function tracker() {
  const work = new Set<Promise<unknown>>();
  return {
    track: (p: Promise<unknown>) => {
      const t = p.catch(() => undefined).finally(() => work.delete(t));
      work.add(t);
    },
    async settled() {
      while (work.size) await Promise.allSettled([...work]);
    },
  };
}

describe.each(BACKENDS)("jobs on $name", (backend) => {
  it("a job held by an instance whose lease ended is taken again and finished; a live holder keeps it", async () => {
    const db = await freshDb(backend);
    const now = Date.now();
    await db.query("insert into instances (id, pid, started_at, lease_until) values ('inst_dead', 1, $1, $2)", [
      now,
      now - 1,
    ]);
    await db.query("insert into instances (id, pid, started_at, lease_until) values ('inst_busy', 2, $1, $2)", [
      now,
      now + 60_000,
    ]);
    await db.query(
      `insert into jobs (id, kind, payload, run_at, attempts, locked_by, created_at) values
       ('job_orphan', 'work', '{"n":1}', $1, 1, 'inst_dead', $1), ('job_held', 'work', '{"n":2}', $1, 1, 'inst_busy', $1)`,
      [now],
    );
    const events = new EventBus();
    const cluster = await joinCluster(db, events, "inst_me");
    cleanup.push(() => cluster.close());
    const t = tracker();
    const jobs = new Jobs({ db, instanceId: "inst_me", track: t.track });
    const seen: unknown[] = [];
    jobs.handle("work", async (p) => {
      seen.push(p);
    });
    jobs.wake();
    await t.settled();
    expect(seen).toEqual([{ n: 1 }]);
    const left = await db.query<{ id: string }>("select id from jobs order by id");
    expect(left.map((r) => r.id)).toEqual(["job_held"]);
  });

  it("a failed job is retried later with backoff, and a job is never run twice at once", async () => {
    const db = await freshDb(backend);
    const events = new EventBus();
    const cluster = await joinCluster(db, events, "inst_one");
    cleanup.push(() => cluster.close());
    const t = tracker();
    const one = new Jobs({ db, instanceId: "inst_one", track: t.track });
    const two = new Jobs({ db, instanceId: "inst_one", track: t.track });
    let running = 0;
    let most = 0;
    let calls = 0;
    const handler = async () => {
      calls++;
      running++;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, 50));
      running--;
      if (calls === 1) throw new Error("first try fails");
    };
    one.handle("flaky", handler);
    two.handle("flaky", handler);
    await one.enqueue("flaky", {}, { key: "flaky:1" });
    expect(await one.enqueue("flaky", {}, { key: "flaky:1" })).toBe(false);
    two.wake();
    one.wake();
    await t.settled();
    expect(calls).toBe(1);
    expect(most).toBe(1);
    const [row] = await db.query<{ run_at: string; locked_by: string | null; attempts: number }>(
      "select run_at, locked_by, attempts from jobs",
    );
    expect(row).toMatchObject({ locked_by: null, attempts: 1 });
    expect(Number(row!.run_at)).toBeGreaterThan(Date.now());
    await db.query("update jobs set run_at = 0");
    one.wake();
    two.wake();
    await t.settled();
    expect(calls).toBe(2);
    expect(await db.query("select 1 from jobs")).toHaveLength(0);
  });

  it("shared events reach the other instance, its own are not delivered twice, domain events stay home", async () => {
    const { a, b } = await twoInstances(backend);
    const onB: string[] = [];
    const onA: string[] = [];
    b.on("run-log", ({ line }) => onB.push(line.text));
    b.on("run-cancel", ({ runId }) => onB.push(`cancel:${runId}`));
    b.on("run-settled", ({ runId }) => onB.push(`settled:${runId}`));
    a.on("run-log", ({ line }) => onA.push(line.text));
    for (let i = 0; i < 5; i++) a.emit("run-log", { runId: "run_1", line: { level: "log", text: `l${i}` } });
    a.emit("run-settled", { runId: "run_1" });
    a.emit("run-cancel", { runId: "run_1" });
    for (let i = 0; i < 100 && !onB.includes("cancel:run_1"); i++) await new Promise((r) => setTimeout(r, 20));
    expect(onB).toEqual(["l0", "l1", "l2", "l3", "l4", "cancel:run_1"]);
    expect(onA).toEqual(["l0", "l1", "l2", "l3", "l4"]);
  });

  it.runIf(backend.name === "pglite")(
    "on PGlite a shared event reaches the other instance on the same database without a statement",
    async () => {
      const { db, a, b, cb } = await twoInstances(backend);
      const onB: string[] = [];
      b.on("run", ({ runId }) => onB.push(`run:${runId}`));
      b.on("run-cancel", ({ runId }) => onB.push(`cancel:${runId}`));
      const before = db.stats().statements;
      for (let i = 0; i < 10; i++) a.emit("run", { runId: `run_${i}` });
      a.emit("run-cancel", { runId: "run_9" });
      for (let i = 0; i < 100 && !onB.includes("cancel:run_9"); i++) await new Promise((r) => setTimeout(r, 20));
      expect(onB).toEqual([...Array.from({ length: 10 }, (_, i) => `run:run_${i}`), "cancel:run_9"]);
      // Was one `select pg_notify` per change (11 here); only a heartbeat (3 statements) may fall in between.
      expect(db.stats().statements - before).toBeLessThanOrEqual(3);
      await cb.close();
      a.emit("run", { runId: "run_after_close" });
      await new Promise((r) => setTimeout(r, 50));
      expect(onB).not.toContain("run:run_after_close");
    },
  );
});

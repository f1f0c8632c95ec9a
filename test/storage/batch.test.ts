/**
 * Group commit (server/db/batch.ts) on PGlite and, when OPENBOT_TEST_DATABASE_URL is set, on Postgres:
 * members issued together become one statement with a result each, in order; one failing member fails
 * only its own caller; members with one key never share a statement.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type BatchKind, batched, batchStats } from "@/server/db/batch";
import type { Db } from "@/server/db/client";
import { migrate } from "@/server/db/migrate";
import { type ReadWrite, recordCalls, recordOutcomes, recordReads } from "@/server/services/code-runs/call-writes";
import { startOperations } from "@/server/services/operation-writes";
import { VAULT_FINGERPRINT } from "@/server/services/vault";
import { BACKENDS, openFresh } from "../helpers/databases";

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!().catch(() => undefined);
});

async function freshDb(backend: (typeof BACKENDS)[number]): Promise<Db> {
  const db = await openFresh(backend, cleanup);
  await db.query(
    "create table items (seq bigserial primary key, name text not null unique, note text not null check (note <> 'bad'))",
  );
  return db;
}

interface Item {
  name: string;
  note: string;
}

/** Inserts every member in one statement; each gets the sequence number its row took. */
const insertItems: BatchKind<Item, number> = {
  name: "insert-items",
  key: (m) => m.name,
  async run(db, members) {
    const rows = await db.query<{ n: number; seq: string | number }>(
      `with v as (select * from json_to_recordset($1::json) as v(n int, name text, note text)),
       ins as (insert into items (name, note) select name, note from v order by n returning seq, name)
       select v.n, ins.seq from v join ins on ins.name = v.name order by v.n`,
      [JSON.stringify(members.map((m, n) => ({ n, ...m })))],
    );
    return rows.map((r) => Number(r.seq));
  },
};

const names = async (db: Db) =>
  (await db.query<{ name: string }>("select name from items order by seq")).map((r) => r.name);

describe.each(BACKENDS)("group commit on $name", (backend) => {
  it("sends members issued together as one statement, each caller getting its own row, in order", async () => {
    const db = await freshDb(backend);
    const before = db.stats().statements;
    const seqs = await Promise.all(
      ["a", "b", "c", "d", "e"].map((name) => batched(db, insertItems, { name, note: "" })),
    );
    expect(db.stats().statements - before).toBe(1);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(new Set(seqs).size).toBe(5);
    expect(await names(db)).toEqual(["a", "b", "c", "d", "e"]);
    expect(batchStats(db)).toMatchObject({ statements: 1, members: 5, retried: 0 });
  });

  it("members arriving while a statement is on its way go together in the next one, after it", async () => {
    const db = await freshDb(backend);
    const first = batched(db, insertItems, { name: "first", note: "" });
    await new Promise((resolve) => setImmediate(resolve));
    const later = ["x", "y", "z"].map((name) => batched(db, insertItems, { name, note: "" }));
    const [one, ...rest] = await Promise.all([first, ...later]);
    expect(rest.every((seq) => seq > one!)).toBe(true);
    expect(batchStats(db)).toMatchObject({ statements: 2, members: 4 });
    expect(await names(db)).toEqual(["first", "x", "y", "z"]);
  });

  it("one failing member fails only its own caller: the others are written and answered", async () => {
    const db = await freshDb(backend);
    const results = await Promise.allSettled([
      batched(db, insertItems, { name: "ok1", note: "" }),
      batched(db, insertItems, { name: "broken", note: "bad" }),
      batched(db, insertItems, { name: "ok2", note: "" }),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    const failed = results[1] as PromiseRejectedResult;
    expect(String((failed.reason as Error).message)).toMatch(/check constraint/);
    expect(await names(db)).toEqual(["ok1", "ok2"]);
    // The batch, then each member alone.
    expect(batchStats(db)).toMatchObject({ statements: 4, members: 3, retried: 1 });
  });

  it("members with one key never share a statement: the later one waits for the next and sees the first", async () => {
    const db = await freshDb(backend);
    const results = await Promise.allSettled([
      batched(db, insertItems, { name: "same", note: "first" }),
      batched(db, insertItems, { name: "other", note: "" }),
      batched(db, insertItems, { name: "same", note: "second" }),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected"]);
    expect(String(((results[2] as PromiseRejectedResult).reason as Error).message)).toMatch(/duplicate key|unique/);
    expect(await db.query("select name, note from items order by seq")).toEqual([
      { name: "same", note: "first" },
      { name: "other", note: "" },
    ]);
    // [same, other] together, then [same] alone (it fails on its own: no retry needed).
    expect(batchStats(db)).toMatchObject({ statements: 2, members: 3, retried: 0 });
  });

  it("big members go in smaller statements (at most about 1 MiB each), still in order", async () => {
    const db = await freshDb(backend);
    const sized: BatchKind<Item, number> = { ...insertItems, name: "sized", size: (m) => m.note.length };
    const big = "x".repeat(600_000);
    const seqs = await Promise.all([
      batched(db, sized, { name: "b1", note: big }),
      batched(db, sized, { name: "s1", note: "" }),
      batched(db, sized, { name: "b2", note: big }),
      batched(db, sized, { name: "s2", note: "" }),
    ]);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(await names(db)).toEqual(["b1", "s1", "b2", "s2"]);
    // [b1, s1], then [b2, s2]: b2 would take the first past 1 MiB.
    expect(batchStats(db)).toMatchObject({ statements: 2, members: 4 });
  });

  it("when the database is unreachable every member gets that error at once, without a retry per member", async () => {
    const db = await freshDb(backend);
    const gone: BatchKind<Item, number> = {
      name: "gone",
      run: () => Promise.reject(Object.assign(new Error("terminating connection"), { code: "57P01" })),
    };
    const results = await Promise.allSettled(["g1", "g2", "g3"].map((name) => batched(db, gone, { name, note: "" })));
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected", "rejected"]);
    expect(batchStats(db)).toMatchObject({ statements: 1, members: 3, retried: 0 });
  });

  it("a statement answering the wrong number of rows fails its members instead of mismatching them", async () => {
    const db = await freshDb(backend);
    const short: BatchKind<Item, number> = {
      name: "short",
      run: async (d, members) => (await insertItems.run(d, members)).slice(1),
    };
    const results = await Promise.allSettled([
      batched(db, short, { name: "p", note: "" }),
      batched(db, short, { name: "q", note: "" }),
    ]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
  });
});

/**
 * The journal's kinds (code-runs/call-writes.ts) on the real schema: calls of two runs recorded and
 * completed in one statement each get their places in their own run's completion order, in the order
 * they were asked; a call recorded twice at once is recorded once; a run at another attempt records nothing.
 */
describe.each(BACKENDS)("the journal's group writes on $name", (backend) => {
  async function withRuns(db: Db, ids: string[]) {
    await migrate(db);
    await db.query("insert into users (id, name, role, created_at) values ('u1', 'U', 'admin', 0)");
    await db.query("insert into chats (id, owner_id, title, created_at, updated_at) values ('c1', 'u1', 'T', 0, 0)");
    for (const id of ids)
      await db.query(
        `insert into code_runs (id, execution_id, chat_id, created_by, status, language, code_enc, reason_enc, run_time,
           seed, limits, bindings, host, created_at, updated_at)
         values ($1, $2, 'c1', 'u1', 'Running', 'javascript', '', '', 0, 1, '{}', '[]', 'server', 0, 0)`,
        [id, `exe_${id}`],
      );
  }
  const call = (runId: string, index: number, attempt = 1) => ({
    runId,
    index,
    binding: "work_calendar.list_events",
    source: JSON.stringify({ connectionId: "", connectionName: "", name: "x" }),
    argsEnc: `args-${runId}-${index}`,
    digest: "d",
    createdAt: 1,
    attempt,
    connectionId: "",
  });

  it("records and completes calls of several runs together, each run keeping its own order", async () => {
    const db = await freshDb(backend);
    await withRuns(db, ["r1", "r2"]);
    const recorded = await Promise.all([
      batched(db, recordCalls, call("r1", 0)),
      batched(db, recordCalls, call("r2", 0)),
      batched(db, recordCalls, call("r1", 1)),
      batched(db, recordCalls, call("r1", 1)),
      batched(db, recordCalls, call("r2", 1, 2)),
      batched(db, recordCalls, call("nope", 0)),
    ]);
    expect(recorded.map((r) => r.inserted)).toEqual([true, true, true, false, false, false]);
    expect(recorded[4]).toMatchObject({ status: "Running", attempt: 1, inserted: false });
    expect(recorded[5]).toMatchObject({ status: null, attempt: null });
    const outcome = (runId: string, index: number) => ({
      runId,
      index,
      outcomeEnc: `o${index}`,
      rejection: null,
      at: 5,
    });
    await Promise.all([
      batched(db, recordOutcomes, outcome("r1", 1)),
      batched(db, recordOutcomes, outcome("r2", 0)),
      batched(db, recordOutcomes, outcome("r1", 0)),
    ]);
    const rows = await db.query<{ run_id: string; idx: number; completed_seq: number }>(
      "select run_id, idx, completed_seq from code_run_calls order by run_id, completed_seq",
    );
    expect(rows).toEqual([
      { run_id: "r1", idx: 1, completed_seq: 1 },
      { run_id: "r1", idx: 0, completed_seq: 2 },
      { run_id: "r2", idx: 0, completed_seq: 1 },
    ]);
    const runs = await db.query<{ id: string; completions: number; updated_at: string | number }>(
      "select id, completions, updated_at from code_runs order by id",
    );
    expect(runs.map((r) => [r.id, r.completions, Number(r.updated_at)])).toEqual([
      ["r1", 2, 5],
      ["r2", 1, 5],
    ]);
    // The calls in two statements (the second r1:1 waits for the first), the outcomes in one.
    expect(batchStats(db)).toMatchObject({ statements: 3, members: 9, retried: 0 });
  });

  /**
   * A read sent before anything was written (code-runs/reads.ts): its record, outcome, place in the
   * completion order and ended operation in one statement for every member, and nothing at all for a
   * member whose run is stopped or at another attempt, whose index is recorded, whose tool the stored
   * policy no longer allows, or whose answer was redacted against an older vault.
   */
  it("writes reads of several runs together with their operations, and nothing for a member it refuses", async () => {
    const db = await freshDb(backend);
    await withRuns(db, ["r1", "r2", "r3"]);
    await db.query("update code_runs set status = 'Cancelled' where id = 'r3'");
    await db.query(
      `insert into connections (id, name, slug, transport, enabled, policies, builtin, created_at, updated_at)
       values ('k1', 'K', 'k', '{}', true, '{"edit":"allow","shut":"deny","odd":"maybe"}', null, 0, 0)`,
    );
    const fingerprint = (await db.query<{ fingerprint: string }>(`select ${VAULT_FINGERPRINT} as fingerprint`))[0]
      ?.fingerprint;
    // An outcome of the ordinary path for r1, in flight together with the reads: one completion order.
    await batched(db, recordCalls, call("r1", 0));
    const read = (runId: string, index: number, over: Partial<ReadWrite> = {}): ReadWrite => ({
      ...call(runId, index),
      connectionId: "k1",
      tool: "list",
      defaultPolicy: "allow",
      fingerprint: fingerprint!,
      outcomeEnc: `o-${runId}-${index}`,
      at: 7,
      operation: {
        id: `op-${runId}-${index}`,
        executionId: `exe-${runId}-${index}`,
        chatId: "c1",
        argsEnc: "a",
        startedAt: 3,
        status: "Completed",
        resultEnc: "r",
        errorReason: null,
        finishedAt: 6,
      },
      ...over,
    });
    const written = await Promise.all([
      batched(db, recordOutcomes, { runId: "r1", index: 0, outcomeEnc: "o0", rejection: null, at: 5 }),
      batched(db, recordReads, read("r1", 1)),
      batched(db, recordReads, read("r2", 0, { tool: "odd" })), // not a policy: the default (allow) holds
      batched(db, recordReads, read("r1", 2)),
      batched(db, recordReads, read("r1", 0)), // recorded by the ordinary path above
      batched(db, recordReads, read("r2", 1, { attempt: 2 })),
      batched(db, recordReads, read("r3", 0)),
      batched(db, recordReads, read("r2", 2, { tool: "shut" })),
      batched(db, recordReads, read("r2", 3, { tool: "new", defaultPolicy: "ask" })),
      batched(db, recordReads, read("r2", 4, { fingerprint: "older" })),
      batched(db, recordReads, read("r2", 5, { connectionId: "gone" })),
      batched(db, recordReads, read("nope", 0)),
    ]);
    expect(written.slice(1).map((w) => w!.inserted)).toEqual([
      true,
      true,
      true,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(written[5]).toEqual({ status: "Running", attempt: 1, inserted: false });
    expect(written[6]).toEqual({ status: "Cancelled", attempt: 1, inserted: false });
    expect(written[11]).toEqual({ status: null, attempt: null, inserted: false });
    const calls = await db.query<{ run_id: string; idx: number; outcome_enc: string; operation_id: string | null }>(
      "select run_id, idx, outcome_enc, operation_id from code_run_calls order by run_id, idx",
    );
    expect(calls).toEqual([
      { run_id: "r1", idx: 0, outcome_enc: "o0", operation_id: null },
      { run_id: "r1", idx: 1, outcome_enc: "o-r1-1", operation_id: "op-r1-1" },
      { run_id: "r1", idx: 2, outcome_enc: "o-r1-2", operation_id: "op-r1-2" },
      { run_id: "r2", idx: 0, outcome_enc: "o-r2-0", operation_id: "op-r2-0" },
    ]);
    const seqs = await db.query<{ run_id: string; idx: number; completed_seq: number }>(
      "select run_id, idx, completed_seq from code_run_calls order by run_id, completed_seq",
    );
    // Places are unique within a run, also with the ordinary path's outcome in flight beside the reads
    // (a refused member may leave a gap, never a repeat); r1's two reads keep the order they came in.
    for (const id of ["r1", "r2"]) {
      const own = seqs.filter((r) => r.run_id === id).map((r) => Number(r.completed_seq));
      expect(new Set(own).size).toBe(own.length);
      expect(own.every((k) => k > 0)).toBe(true);
    }
    const place = (idx: number) => Number(seqs.find((r) => r.run_id === "r1" && r.idx === idx)?.completed_seq);
    expect(place(1)).toBeLessThan(place(2));
    const ops = await db.query<Record<string, unknown>>(
      `select id, execution_id, chat_id, run_id, call_index, connection_id, tool, status, args_enc, started_at,
         result_enc, error_reason, finished_at from app_operations order by id`,
    );
    expect(ops.map((o) => o.id)).toEqual(["op-r1-1", "op-r1-2", "op-r2-0"]);
    expect({ ...ops[0], started_at: Number(ops[0]!.started_at), finished_at: Number(ops[0]!.finished_at) }).toEqual({
      id: "op-r1-1",
      execution_id: "exe-r1-1",
      chat_id: "c1",
      run_id: "r1",
      call_index: 1,
      connection_id: "k1",
      tool: "list",
      status: "Completed",
      args_enc: "a",
      started_at: 3,
      result_enc: "r",
      error_reason: null,
      finished_at: 6,
    });
  });

  /**
   * Each member's rows are found through their keys' indexes: a join the planner is free to choose was a
   * hash join over every run and every call (on PGlite, without autovacuum's statistics), a cost that grew
   * with the tables. Checked on the plans of the three statements with 2,000 runs and 40,000 calls stored.
   */
  it("finds each member's run, call and operation by index, not by scanning the tables", async () => {
    const db = await freshDb(backend);
    await withRuns(db, ["r1"]);
    // 2,000 runs of 20 calls each, written in two statements.
    await db.query(
      `insert into code_runs (id, execution_id, chat_id, created_by, status, language, code_enc, reason_enc, run_time,
         seed, limits, bindings, host, created_at, updated_at)
       select 'g' || g, 'exe_g' || g, 'c1', 'u1', 'Running', 'javascript', '', '', 0, 1, '{}', '[]', 'server', 0, 0
       from generate_series(1, 2000) g`,
    );
    await db.query(
      `insert into code_run_calls (run_id, idx, binding, source, args_enc, args_digest, created_at)
       select 'g' || (g / 20 + 1), g % 20, 'b', '{}', 'a', 'd', 0 from generate_series(0, 39999) g`,
    );
    const seen: { sql: string; params: unknown[] }[] = [];
    const spy: Db = {
      ...db,
      query: (sql: string, params?: unknown[]) => {
        seen.push({ sql, params: params ?? [] });
        return db.query(sql, params);
      },
    } as Db;
    await Promise.all([batched(spy, recordCalls, call("g1999", 20)), batched(spy, recordCalls, call("g1998", 20))]);
    await batched(spy, startOperations, {
      id: "op1",
      executionId: "exe_op1",
      chatId: "c1",
      runId: "g1999",
      callIndex: 20,
      connectionId: "x",
      tool: "t",
      argsEnc: "a",
      startedAt: 1,
    });
    await Promise.all([
      batched(spy, recordOutcomes, {
        runId: "g1999",
        index: 20,
        outcomeEnc: "o",
        rejection: null,
        at: 5,
        operation: { id: "op1", status: "Completed", resultEnc: "r", errorReason: null, finishedAt: 6 },
      }),
      batched(spy, recordOutcomes, { runId: "g1998", index: 20, outcomeEnc: "o", rejection: null, at: 5 }),
    ]);
    const fingerprint = (await db.query<{ fingerprint: string }>(`select ${VAULT_FINGERPRINT} as fingerprint`))[0]
      ?.fingerprint;
    await batched(spy, recordReads, {
      ...call("g1997", 20),
      tool: "t",
      defaultPolicy: "allow",
      fingerprint: fingerprint!,
      outcomeEnc: "o",
      at: 5,
      operation: {
        id: "op2",
        executionId: "exe_op2",
        chatId: "c1",
        argsEnc: "a",
        startedAt: 1,
        status: "Completed",
        resultEnc: "r",
        errorReason: null,
        finishedAt: 2,
      },
    });
    expect(seen).toHaveLength(4);
    for (const { sql, params } of seen) {
      // `explain` plans the statement without running it again.
      const plan = (await db.query<Record<string, string>>(`explain ${sql}`, params))
        .map((r) => Object.values(r)[0])
        .join("\n");
      expect(plan, plan).not.toMatch(/Seq Scan on (code_runs|code_run_calls|app_operations)/);
    }
  });
});

/**
 * The built-in Apps' reads issued together share one statement (server/db/batch.ts `readByKey`,
 * `sharedRead`), over the real MCP client and the in-process transport on a real database: each call
 * gets exactly the rows its own statement would give it, in the same order; a statement that fails is
 * sent again member by member, so only the member whose own statement fails gets an error.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppRegistry } from "@/server/apps/registry";
import { batchStats } from "@/server/db/batch";
import { type Db, openDb } from "@/server/db/client";
import { migrate } from "@/server/db/migrate";
import { entryOf, failure } from "./helpers";

/** The day whose statements the database refuses (as a statement failing for any reason would be). */
const POISONED = "2031-01-01";

let db: Db;
let refusing: Db;
let apps: AppRegistry;
let dataDir: string;
beforeAll(async () => {
  db = await openDb({});
  await migrate(db);
  // Events out of start order, over several days, and two days with one event each.
  const events: [string, string, string][] = [];
  for (let d = 1; d <= 6; d++)
    for (let i = 0; i < d; i++) {
      const day = `2030-05-0${d}`;
      const hour = String(17 - ((i * 5) % 9)).padStart(2, "0");
      events.push([`evt_t_${d}_${i}`, day, `${day}T${hour}:00:00Z`]);
    }
  events.push(
    ["evt_t_tie_b", "2030-05-07", "2030-05-07T09:00:00Z"],
    ["evt_t_tie_a", "2030-05-07", "2030-05-07T09:00:00Z"],
  );
  for (const [id, day, start] of events)
    await db.query(
      "insert into calendar_events (id, day, title, start_at, end_at, attendees) values ($1, $2, $3, $4, $4, 3)",
      [id, day, `t ${id}`, start],
    );
  for (const [id, title, at] of [
    ["note_t_1", "one", 1],
    ["note_t_2", "two", 2],
  ] as const)
    await db.query("insert into notes (id, title, body, created_at, updated_at) values ($1, $2, $3, $4, $4)", [
      id,
      title,
      `body of ${title}`,
      at,
    ]);
  // The same database, refusing every statement that reads the poisoned day.
  refusing = new Proxy(db, {
    get(target, prop, receiver) {
      if (prop !== "query") return Reflect.get(target, prop, receiver);
      return (sql: string, params?: unknown[]) => {
        if (/from calendar_events/.test(sql) && JSON.stringify(params ?? []).includes(POISONED))
          return Promise.reject(new Error("refused for the test"));
        return target.query(sql, params);
      };
    },
  });
  dataDir = mkdtempSync(path.join(tmpdir(), "openbot-reads-"));
  apps = await AppRegistry.start({ db: refusing, dataDir });
});
afterAll(async () => {
  await apps?.close();
  await db?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const call = (binding: string, args: unknown) => apps.call(entryOf(apps, binding), args);

/** What one statement for `day` alone returns, as the tool's events. */
async function alone(day: string) {
  const rows = await db.query<{ id: string; title: string; start_at: string; end_at: string; attendees: number }>(
    "select id, title, start_at, end_at, attendees from calendar_events where day = $1 order by start_at, id",
    [day],
  );
  return rows.map((r) => ({ id: r.id, title: r.title, start: r.start_at, end: r.end_at, attendees: r.attendees }));
}

describe("built-in reads issued together", () => {
  it("20 list-events of different days in one Promise.all: one statement, each call its own day's rows in order", async () => {
    const days = Array.from({ length: 20 }, (_, i) => (i < 16 ? `2030-05-0${(i % 8) + 1}` : `2030-06-${10 + i}`));
    const expected = await Promise.all(days.map(alone));
    // Every day of these is distinct from the next, and some days have several events out of start order.
    expect(expected.map((e) => e.length)).toEqual([1, 2, 3, 4, 5, 6, 2, 0, 1, 2, 3, 4, 5, 6, 2, 0, 0, 0, 0, 0]);
    expect(expected[6]!.map((e) => e.id)).toEqual(["evt_t_tie_a", "evt_t_tie_b"]);
    const before = batchStats(refusing);
    const results = await Promise.all(days.map((day) => call("work_calendar.list_events", { day })));
    const after = batchStats(refusing);
    expect(results.map((r) => (r.structuredContent as { events: unknown[] }).events)).toEqual(expected);
    expect(after.members - before.members).toBe(20);
    expect(after.statements - before.statements).toBe(1);
    expect(after.retried).toBe(before.retried);
  });

  it("a read statement that fails is sent again member by member: only the member whose own statement fails gets an error", async () => {
    const days = ["2030-05-03", POISONED, "2030-05-05", "2030-05-03"];
    const before = batchStats(refusing);
    const settled = await Promise.allSettled(days.map((day) => call("work_calendar.list_events", { day })));
    const after = batchStats(refusing);
    expect(after.retried - before.retried).toBe(1);
    // The shared statement, then each of the four alone.
    expect(after.statements - before.statements).toBe(5);
    const ok = (i: number) => {
      const s = settled[i]!;
      if (s.status !== "fulfilled") throw new Error(`call ${i} failed`);
      return (s.value.structuredContent as { events: unknown[] }).events;
    };
    expect(ok(0)).toEqual(await alone("2030-05-03"));
    expect(ok(2)).toEqual(await alone("2030-05-05"));
    expect(ok(3)).toEqual(await alone("2030-05-03"));
    expect(settled[1]!.status).toBe("rejected");
    const bad = await failure(call("work_calendar.list_events", { day: POISONED }));
    expect(bad.reason).toBe("tool_error");
  });

  it("a read after a write sees it; notes and the outbox share their reads too", async () => {
    const created = await call("work_calendar.create_event", {
      title: "Late add",
      start: "2030-05-01T06:00:00Z",
      end: "2030-05-01T07:00:00Z",
      attendees: 1,
    });
    const listed = await call("work_calendar.list_events", { day: "2030-05-01" });
    expect((listed.structuredContent as { events: { id: string }[] }).events.map((e) => e.id)).toEqual([
      (created.structuredContent as { id: string }).id,
      "evt_t_1_0",
    ]);

    const before = batchStats(refusing);
    const [one, two, missing, list1, list2, sent1, sent2] = await Promise.all([
      call("notes.read_note", { id: "note_t_1" }),
      call("notes.read_note", { id: "note_t_2" }),
      failure(call("notes.read_note", { id: "note_none" })),
      call("notes.list_notes", {}),
      call("notes.list_notes", {}),
      call("email.list_sent", {}),
      call("email.list_sent", {}),
    ]);
    const after = batchStats(refusing);
    expect(one.structuredContent).toEqual({ id: "note_t_1", title: "one", body: "body of one" });
    expect(two.structuredContent).toEqual({ id: "note_t_2", title: "two", body: "body of two" });
    expect(missing.reason).toBe("tool_error");
    const lone = await db.query<{ id: string; title: string }>(
      "select id, title from notes order by updated_at desc, id",
    );
    expect(list1.structuredContent).toEqual({ notes: lone.map((r) => ({ id: r.id, title: r.title })) });
    expect(list2.structuredContent).toEqual(list1.structuredContent);
    expect(sent1.structuredContent).toEqual(sent2.structuredContent);
    // One statement per kind: read-note, list-notes, list-sent.
    expect(after.members - before.members).toBe(7);
    expect(after.statements - before.statements).toBe(3);
  });
});

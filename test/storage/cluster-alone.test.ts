/**
 * PGlite's cluster bus (server/cluster.ts) makes no message while it is the only cluster joined on its
 * database object (its NOTIFY would reach nobody: it drops its own), and delivers again as soon as
 * another instance joins the same database.
 */
import { afterEach, expect, it, vi } from "vitest";
import { joinCluster } from "@/server/cluster";
import { type Db, openDb } from "@/server/db/client";
import { migrate } from "@/server/db/migrate";
import { EventBus } from "@/server/events";

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  while (cleanup.length) await cleanup.pop()!().catch(() => undefined);
});

it("a lone PGlite instance makes no message per change; a second instance on the database hears them", async () => {
  const db: Db = await openDb({});
  cleanup.push(() => db.close());
  await migrate(db);
  const a = new EventBus();
  const ca = await joinCluster(db, a, "inst_a");
  cleanup.push(() => ca.close());
  const heard: string[] = [];
  a.on("run", ({ runId }) => heard.push(`a:${runId}`));
  const stringify = vi.spyOn(JSON, "stringify");
  for (let i = 0; i < 5; i++) a.emit("run", { runId: `run_${i}` });
  a.emit("run-log", { runId: "run_0", line: { level: "log", text: "alone" } });
  expect(stringify).not.toHaveBeenCalled();
  stringify.mockRestore();
  // Still delivered on this instance's own bus.
  expect(heard).toEqual(["a:run_0", "a:run_1", "a:run_2", "a:run_3", "a:run_4"]);

  const b = new EventBus();
  const cb = await joinCluster(db, b, "inst_b");
  cleanup.push(() => cb.close());
  const onB: string[] = [];
  b.on("run", ({ runId }) => onB.push(`run:${runId}`));
  b.on("run-log", ({ line }) => onB.push(`log:${line.text}`));
  a.emit("run-log", { runId: "run_9", line: { level: "log", text: "together" } });
  a.emit("run", { runId: "run_9" });
  for (let i = 0; i < 100 && !onB.includes("run:run_9"); i++) await new Promise((r) => setTimeout(r, 20));
  expect(onB).toEqual(["log:together", "run:run_9"]);
  // And back to none once the other instance has left.
  await cb.close();
  const again = vi.spyOn(JSON, "stringify");
  a.emit("run", { runId: "run_10" });
  expect(again).not.toHaveBeenCalled();
});

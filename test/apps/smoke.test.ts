import { it } from "vitest";
import { openDb } from "@/server/db/client";
import { migrate } from "@/server/db/migrate";
import { AppRegistry } from "@/server/apps/registry";
it("smoke", async () => {
  const db = await openDb({});
  await migrate(db);
  const t0 = Date.now();
  const reg = await AppRegistry.start({ db, dataDir: "/tmp/smoke-data" });
  console.log("start ms", Date.now() - t0);
  console.log(JSON.stringify(reg.connections().map(c => [c.name, c.status, c.error, c.tools.map(t => t.binding + ":" + t.policy)]), null, 1));
  const e = reg.resolve("work_calendar.list_events")!;
  console.log(JSON.stringify(e.inputSchema), JSON.stringify(e.outputSchema));
  console.log(JSON.stringify(await reg.call(e, { day: "2026-10-23" })));
  try { await reg.call(e, { day: "x" }); } catch (err) { console.log(err); }
  let t1 = Date.now(); const v = await reg.add({ name: "Everything", transport: { type: "preset", preset: "everything" } });
  console.log(v.status, v.error, v.tools.map(t => t.binding + ":" + t.policy), v.resources.length, v.prompts.length, v.warnings);
  console.log(JSON.stringify(await reg.call(reg.resolve("everything.echo")!, { message: "hi" })));
  console.log("add ms", Date.now() - t1); t1 = Date.now(); await reg.close(); console.log("close ms", Date.now() - t1); await db.close();
});

import { it } from "vitest";
import { openDb } from "@/server/db/client";
import { migrate } from "@/server/db/migrate";
import { AppRegistry } from "@/server/apps/registry";
it("smoke", async () => {
  let t = Date.now();
  const lap = (l: string) => { console.log(l, Date.now() - t); t = Date.now(); };
  const db = await openDb({}); lap("open");
  await migrate(db); lap("migrate");
  const reg = await AppRegistry.start({ db, dataDir: "/tmp/smoke-data" }); lap("start");
  await reg.add({ name: "Everything", transport: { type: "preset", preset: "everything" } }); lap("everything");
  await reg.add({ name: "Memory", transport: { type: "preset", preset: "memory" } }); lap("memory");
  const f = await reg.add({ name: "Files", transport: { type: "preset", preset: "filesystem" } }); lap("fs");
  console.log(f.status, f.error, f.tools.length, reg.connections().map(c => c.status));
  await reg.close(); lap("close");
  await db.close(); lap("dbclose");
});

import { Worker } from "node:worker_threads";
for (const mb of [4, 16, 64]) {
  await new Promise((resolve) => {
    const w = new Worker(new URL("./stack2.mjs", import.meta.url), { argv: ["256", "5"], resourceLimits: { stackSizeMb: mb } });
    w.on("exit", resolve); w.on("error", (e) => { console.log(mb, "error", e.message); resolve(); });
  });
}

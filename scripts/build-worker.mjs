/**
 * Bundles the sandbox for Node: dist/worker/node-worker.mjs (the worker_threads entry the server spawns)
 * and dist/worker/engine.mjs, dist/worker/supervisor.mjs, dist/worker/node-port.mjs (for the benchmark). QuickJS packages stay external and load
 * from node_modules, so the .wasm is found next to its loader. dist/worker/pglite-thread.mjs: the thread
 * that owns the embedded database (PGlite external, its .wasm and data load from node_modules). Idempotent; prints one line.
 */

import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const started = performance.now();
const common = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  external: ["quickjs-emscripten-core", "@jitl/quickjs-wasmfile-release-sync"],
  absWorkingDir: root,
  logLevel: "warning",
  legalComments: "none",
};
await Promise.all([
  build({ ...common, entryPoints: ["worker/node-worker.ts"], outfile: "dist/worker/node-worker.mjs" }),
  build({ ...common, entryPoints: ["worker/engine.ts"], outfile: "dist/worker/engine.mjs" }),
  build({ ...common, entryPoints: ["worker/supervisor.ts"], outfile: "dist/worker/supervisor.mjs" }),
  build({ ...common, entryPoints: ["worker/node-port.ts"], outfile: "dist/worker/node-port.mjs" }),
  // The thread that owns PGlite (server/db/pglite-thread.ts); `server-only` is empty under react-server.
  build({
    ...common,
    entryPoints: ["server/db/pglite-thread.ts"],
    outfile: "dist/worker/pglite-thread.mjs",
    external: ["@electric-sql/pglite"],
    conditions: ["react-server"],
  }),
]);
console.log(
  `build-worker: dist/worker/{node-worker,engine,supervisor,node-port,pglite-thread}.mjs in ${Math.round(performance.now() - started)} ms`,
);

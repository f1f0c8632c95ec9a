// `npm run bench:decisions`: runs scripts/bench/decisions.ts (see that file) after building the Node sandbox worker.
import { spawnSync } from "node:child_process";
import { root, runTs } from "./run-ts.mjs";

const built = spawnSync(process.execPath, ["scripts/build-worker.mjs"], { cwd: root, stdio: "inherit" });
if (built.status !== 0) process.exit(built.status ?? 1);
process.exit(
  await runTs("scripts/bench/decisions.ts", "bench/decisions.mjs", process.argv.slice(2), {
    cwd: root,
    timeout: 600_000,
  }),
);

// `npm run bench:tokens`: bundles scripts/bench/tokens.ts with esbuild (dependencies stay external and load
// from node_modules; `@/` resolves to the repo root as in tsconfig paths), then runs it. See that file.
// `--strict` makes a missed target exit with status 1.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const out = path.join(root, "dist", "bench", "tokens.mjs");
await build({
  entryPoints: [path.join(root, "scripts/bench/tokens.ts")],
  outfile: out,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  alias: { "@": root },
  absWorkingDir: root,
  logLevel: "warning",
});
const r = spawnSync(process.execPath, [out, ...process.argv.slice(2)], { stdio: "inherit", cwd: root, timeout: 180_000 });
if (r.error) console.error(`bench:tokens: ${r.error.message}`);
process.exit(r.status ?? 1);

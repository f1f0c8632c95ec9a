// `npm run openbot -- <command>`: bundles the TypeScript command line once with esbuild, then runs it.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const out = path.join(root, "dist", "cli.mjs");
await build({
  entryPoints: [path.join(root, "server/cli/main.ts")],
  outfile: out,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  alias: { "@": root },
  logLevel: "warning",
});
const r = spawnSync(process.execPath, [out, ...process.argv.slice(2)], { stdio: "inherit", cwd: process.cwd() });
process.exit(r.status ?? 1);

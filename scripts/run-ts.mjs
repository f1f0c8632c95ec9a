// Runs a TypeScript entry of this repo under plain Node: bundles it with esbuild into dist/ (packages stay
// external and load from node_modules; `@/` is the repo root as in tsconfig paths), then runs the bundle.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** How every TypeScript entry of this repo is bundled for plain Node (packages external, `@/` the root). */
export const NODE_BUNDLE = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  alias: { "@": root },
  absWorkingDir: root,
  logLevel: "warning",
};

/** Bundles `entry` (relative to the repo) to `dist/<outName>` and runs it with `args`; returns its exit status. */
export async function runTs(entry, outName, args, { cwd = process.cwd(), timeout } = {}) {
  const out = path.join(root, "dist", outName);
  await build({
    entryPoints: [path.join(root, entry)],
    outfile: out,
    ...NODE_BUNDLE,
  });
  // Server modules import `server-only`, which resolves to an empty module under the react-server condition.
  const r = spawnSync(process.execPath, ["--conditions=react-server", out, ...args], {
    stdio: "inherit",
    cwd,
    timeout,
  });
  if (r.error) console.error(`${entry}: ${r.error.message}`);
  return r.status ?? 1;
}

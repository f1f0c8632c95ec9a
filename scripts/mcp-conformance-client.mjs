// The client under test for the MCP conformance suite: `node scripts/mcp-conformance-client.mjs <server-url>`,
// the scenario in MCP_CONFORMANCE_SCENARIO, its context (JSON) in MCP_CONFORMANCE_CONTEXT. It runs OpenBot's own
// connection code (server/apps/conformance.ts, bundled by esbuild like every TypeScript entry here); scenarios
// named `auth/…` go to server/apps/oauth/conformance.ts (`runAuthScenario`), built on another branch.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { bundleConformance } from "./mcp-conformance-bundle.mjs";
import { root } from "./run-ts.mjs";

const url = process.argv[2];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
if (!url) {
  console.error("usage: node scripts/mcp-conformance-client.mjs <server-url> (scenario in MCP_CONFORMANCE_SCENARIO)");
  process.exit(2);
}
try {
  JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}");
} catch {
  console.error("MCP_CONFORMANCE_CONTEXT is not JSON.");
  process.exit(2);
}
const auth = scenario.startsWith("auth/");
if (auth && !existsSync(path.join(root, "server/apps/oauth/conformance.ts"))) {
  console.error("auth scenarios are not built on this branch");
  process.exit(1);
}

// `npm run conformance` bundles once before the suite and names the bundles in MCP_CONFORMANCE_BUNDLE_DIR
// (the suite starts many clients at once: they must not write one file together). Run alone, this
// command bundles the current code into a file of its own.
const given = process.env.MCP_CONFORMANCE_BUNDLE_DIR;
const out = given
  ? path.join(given, auth ? "mcp-conformance-auth.mjs" : "mcp-conformance.mjs")
  : path.join(root, "dist", `mcp-conformance-${process.pid}-${auth ? "auth" : "core"}.mjs`);
if (!given || !existsSync(out)) await bundleConformance(out, auth);
// The suite starts every scenario's client at once (about 30). On a busy 2-core machine that many Node
// processes loading the bundle together starve each other past the client's own 20 s connect limit, so
// under `npm run conformance` a client first takes one of a few slots (a file it creates, holding its
// pid) and waits for one while all are taken. A slot whose holder died (the suite kills a client that
// overruns its scenario timeout) is taken over.
const slot = given ? await takeSlot(path.join(given, "slots")) : undefined;
// Server modules import `server-only`, which resolves to an empty module under the react-server condition.
const r = spawnSync(process.execPath, ["--conditions=react-server", out, url], { stdio: "inherit", cwd: root });
if (slot) rmSync(slot, { force: true });
if (!given) rmSync(out, { force: true });
process.exit(r.status ?? 1);

/** Waits for a free slot under `dir` and returns its file (removed when the client is done). */
async function takeSlot(dir) {
  const count = Math.max(2, 2 * os.availableParallelism());
  mkdirSync(dir, { recursive: true });
  for (;;) {
    for (let i = 0; i < count; i++) {
      const file = path.join(dir, String(i));
      try {
        writeFileSync(file, String(process.pid), { flag: "wx" });
        return file;
      } catch {
        if (holderIsGone(file)) rmSync(file, { force: true });
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Whether the pid in a slot file is a process that no longer exists (an empty or vanished file is not). */
function holderIsGone(file) {
  let pid = 0;
  try {
    pid = Number(readFileSync(file, "utf8"));
  } catch {}
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return e.code === "ESRCH";
  }
}

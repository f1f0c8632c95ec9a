// The client under test for the MCP conformance suite: `node scripts/mcp-conformance-client.mjs <server-url>`,
// the scenario in MCP_CONFORMANCE_SCENARIO, its context (JSON) in MCP_CONFORMANCE_CONTEXT. It runs OpenBot's own
// connection code (server/apps/conformance.ts, bundled by esbuild like every TypeScript entry here); scenarios
// named `auth/…` go to server/apps/oauth/conformance.ts (`runAuthScenario`), built on another branch.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";
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

// Bundled on every run (esbuild takes a fraction of a second), so the suite always tests the current code.
const out = path.join(root, "dist", auth ? "mcp-conformance-auth.mjs" : "mcp-conformance.mjs");
{
  mkdirSync(path.dirname(out), { recursive: true });
  const call = auth
    ? 'import { runAuthScenario as run } from "@/server/apps/oauth/conformance";'
    : 'import { runScenario as run } from "@/server/apps/conformance";';
  await build({
    stdin: {
      contents: `${call}
const [url, scenario, context] = [process.argv[2], process.env.MCP_CONFORMANCE_SCENARIO ?? "", JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}")];
run(url, scenario, context).then(() => process.exit(0), (e) => { console.error(e instanceof Error ? e.message : String(e)); process.exit(1); });`,
      resolveDir: root,
      loader: "ts",
    },
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
}
// Server modules import `server-only`, which resolves to an empty module under the react-server condition.
const r = spawnSync(process.execPath, ["--conditions=react-server", out, url], { stdio: "inherit", cwd: root });
process.exit(r.status ?? 1);

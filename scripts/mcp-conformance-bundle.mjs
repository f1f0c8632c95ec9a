// The conformance client's bundle: OpenBot's own Apps code (server/apps/conformance.ts, or the auth
// scenarios' server/apps/oauth/conformance.ts) bundled by esbuild with a tiny entry that runs one scenario.
import { mkdirSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";
import { NODE_BUNDLE, root } from "./run-ts.mjs";

/** Bundles the scenario runner (`auth`: the OAuth one) into `out`. */
export async function bundleConformance(out, auth) {
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
    ...NODE_BUNDLE,
  });
}

/**
 * `npm run bench:sandbox -- --browser`: the page path in real Chromium (OPENBOT_CHROMIUM, default
 * /usr/bin/chromium, through Playwright). Bundles the sandbox Web Worker (worker/browser-worker.ts), a bare
 * quickjs-emscripten worker and the bench page (scripts/bench-browser/) into dist/bench-browser, serves them
 * on 127.0.0.1:OPENBOT_BENCH_PORT (default 3162), and prints the page figures beside the bare worker and the
 * cold start (new worker: module load + first run) with its phases. `--cold` measures only the cold start. Informational only.
 */
import { copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "@playwright/test";
import { build } from "esbuild";
import { fmt, goalOf, PEERS, printTable, WORKLOADS } from "./bench-workloads.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const out = path.join(root, "dist/bench-browser");
const port = Number(process.env.OPENBOT_BENCH_PORT ?? 3162);

await mkdir(out, { recursive: true });
const common = {
  bundle: true,
  platform: "browser",
  format: "esm",
  target: "es2022",
  absWorkingDir: root,
  logLevel: "warning",
};
await Promise.all([
  build({ ...common, entryPoints: ["worker/browser-worker.ts"], outfile: path.join(out, "sandbox-worker.js") }),
  build({
    ...common,
    entryPoints: ["scripts/bench-browser/bare-worker.mjs"],
    outfile: path.join(out, "bare-worker.js"),
  }),
  build({ ...common, entryPoints: ["scripts/bench-browser/page.mjs"], outfile: path.join(out, "page.js") }),
  copyFile(
    path.join(root, "node_modules/@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm"),
    path.join(out, "emscripten-module.wasm"),
  ),
  writeFile(
    path.join(out, "index.html"),
    '<!doctype html><meta charset="utf-8"><title>sandbox bench</title><script type="module" src="./page.js"></script>\n',
  ),
]);

const types = { ".html": "text/html", ".js": "text/javascript", ".wasm": "application/wasm" };
const server = http.createServer(async (req, res) => {
  const name = path.basename(new URL(req.url ?? "/", "http://x").pathname) || "index.html";
  try {
    const body = await readFile(path.join(out, name));
    res.writeHead(200, {
      "content-type": types[path.extname(name)] ?? "application/octet-stream",
      "cache-control": "max-age=3600",
    });
    res.end(body);
  } catch {
    res.writeHead(404).end();
  }
});
await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));

const browser = await chromium.launch({ executablePath: process.env.OPENBOT_CHROMIUM ?? "/usr/bin/chromium" });
try {
  const page = await browser.newPage();
  page.on("pageerror", (error) => console.error("page error:", error.message));
  await page.goto(`http://127.0.0.1:${port}/index.html`);
  await page.waitForFunction(() => typeof window.runBench === "function");
  const coldOnly = process.argv.includes("--cold");
  const { cold, results, crossOriginIsolated, userAgent } = await page.evaluate((options) => window.runBench(options), {
    coldOnly,
  });
  console.log(
    `${userAgent.match(/Chrome\/[\d.]+/)?.[0] ?? userAgent}; crossOriginIsolated ${crossOriginIsolated} (busy time by ${crossOriginIsolated ? "shared meter" : "messages"})`,
  );
  console.log(
    "page path: SandboxSupervisor over Web Workers, tools answered by the page; bare: quickjs-emscripten in a Web Worker, calls answered by the page\n",
  );
  const table = coldOnly ? [] : [["workload", "bare worker", "page", "×bare", "peer", "goal", "page vs goal"]];
  for (const workload of coldOnly ? [] : WORKLOADS) {
    const r = results[workload.name];
    const goal = goalOf(workload.name, r.bare);
    const ratio = goal.ratio(r.page);
    table.push([
      workload.label,
      fmt(r.bare),
      fmt(r.page),
      fmt(r.page / r.bare, 2),
      fmt(PEERS[workload.name]),
      goal.text,
      `${fmt(ratio, 2)} ${ratio <= goal.max ? "ok" : "MISS"}`,
    ]);
  }
  if (!coldOnly) printTable(table);
  console.log(
    `\ncold start (new worker: module load + first run), median of 8 after the first: page ${fmt(cold.ours)} ms (goal ≤ 100 ms: ${cold.ours <= 100 ? "ok" : "MISS"}), bare worker ${fmt(cold.bare)} ms; very first: page ${fmt(cold.first.ours)} ms, bare ${fmt(cold.first.bare)} ms`,
  );
  console.log(
    `cold start phases (page, medians): worker answered "ready" (script + WASM load) at ${fmt(cold.phases.ready)} ms, its first "done" (the warm-up run, or the run itself) at ${fmt(cold.phases.firstDone)} ms, the run's outcome at ${fmt(cold.ours)} ms`,
  );
  console.log(
    `the page compiles the .wasm once (worker/browser-port.ts) and every later worker instantiates that module, so the median is a new worker on a page that loaded the sandbox before; the very first includes the page's fetch + compile: "ready" at ${fmt(cold.first.ready)} ms, first "done" at ${fmt(cold.first.firstDone)} ms, outcome at ${fmt(cold.first.ours)} ms`,
  );
} finally {
  await browser.close();
  server.close();
}

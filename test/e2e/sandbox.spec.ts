/**
 * The engine in the browser: the same program with the same replay log gives the same calls, logs and
 * value in Chromium's Web Worker as in a Node worker thread; and a representative part of the hostile
 * suite is contained in the browser too (exact failure reason, and the next run works).
 */
import path from "node:path";
import { expect, type Page, test } from "@playwright/test";
import type { CallOutcome, RunInput } from "../../contracts/engine";
import { canonicalJson } from "../../worker/canonical-json";
import { spawnNodeWorker } from "../../worker/node-port";
import { SandboxSupervisor } from "../../worker/supervisor";

const LIMITS = { timeoutMs: 2000, memoryMb: 32, outputBytes: 65536, maxPendingCalls: 16 };
const ok = (value: unknown): CallOutcome => ({
  type: "ok",
  resultJson: JSON.stringify({ content: [], structuredContent: value }),
});

const PROGRAM = `const [a, b] = await Promise.all([apps.demo.echo({ text: "a" }), apps.demo.echo({ text: "b" })])
const first = await Promise.race([apps.demo.echo({ text: "c" }), apps.demo.echo({ text: "d" })])
const order = []
await Promise.all(["e", "f", "g"].map(async (t) => { const r = await apps.demo.echo({ text: t }); order.push(r.structuredContent.text) }))
console.log("order", order.join(""), new Date().toISOString())
json({ r: Math.random() })
return { a: a.structuredContent.text, b: b.structuredContent.text, first: first.structuredContent.text, order, now: Date.now(), r: [Math.random(), Math.random()] }`;

const texts = ["a", "b", "c", "d", "e", "f", "g"];
const answers = Object.fromEntries(
  texts.map((t) => [`demo.echo ${canonicalJson(JSON.stringify({ text: t }))}`, ok({ text: t })]),
);
// Recorded outcomes delivered in an order different from issue order: replay must follow it exactly.
const replay = {
  calls: texts.map((t, index) => ({
    index,
    binding: "demo.echo",
    argsJson: canonicalJson(JSON.stringify({ text: t })),
    outcome: ok({ text: t }),
  })),
  completionOrder: [1, 0, 3, 2, 6, 4, 5],
};
const input: RunInput = {
  code: PROGRAM,
  time: 1792486800000,
  seed: 42,
  limits: LIMITS,
  bindings: ["demo.echo"],
  vaultNames: [],
  replay,
};

async function openLab(page: Page) {
  await page.goto("/lab/sandbox");
  await expect(page.getByTestId("lab-ready")).toBeEnabled();
}

test("the browser worker and the Node worker replay the same program identically", async ({ page }) => {
  const supervisor = new SandboxSupervisor({
    spawn: () => spawnNodeWorker(path.resolve("dist/worker/node-worker.mjs")),
  });
  const nodeCalls: unknown[] = [];
  const node = await supervisor.run(input, {
    call: async (req) => {
      nodeCalls.push(req);
      return answers[`${req.binding} ${canonicalJson(req.argsJson)}`]!;
    },
  });
  supervisor.dispose();
  await openLab(page);
  const browser = await page.evaluate(async ([i, a]) => window.openbotLab!.run(i, a), [input, answers] as const);

  expect(node.status).toBe("completed");
  expect(browser.outcome).toEqual(node);
  expect(browser.calls).toEqual(nodeCalls);
  expect(nodeCalls).toEqual([]);
  const value = JSON.parse((node as { valueJson: string }).valueJson);
  // Delivered as recorded: 1 before 0, then 3 (d) wins the race, then g, e, f.
  expect(value).toMatchObject({ a: "a", b: "b", first: "d", order: ["g", "e", "f"], now: 1792486800000 });
});

const HOSTILE: [string, string, string][] = [
  ["infinite loop", "for (;;) {}", "Timeout"],
  [
    "uninterruptible indexOf (the watchdog replaces the worker)",
    "Array.prototype.indexOf.call({ length: 2 ** 32 - 1 }, 1)",
    "Timeout",
  ],
  ["memory bomb", 'const a = []; for (;;) a.push("x".repeat(1 << 20) + a.length)', "Memory"],
  ["string doubling hits QuickJS's length limit (ropes allocate nothing)", 'let s = "x"; for (;;) s += s', "Error"],
  ["typed arrays", "const a = []; for (;;) a.push(new Uint8Array(1 << 20))", "Memory"],
  ["deep recursion", "const f = (n) => f(n + 1) + 1; return f(0)", "Error"],
  // A program can catch its own runaway recursion in the page as on the server (QuickJS's stack check fires
  // before the worker's native stack runs out): plain, async, getter, Proxy, callback and toString recursion.
  [
    "caught recursion",
    `const caught = []
let d = 0
function f() { d++; f() }
try { f() } catch (e) { caught.push(e.name) }
async function g() { await g() }
try { await g() } catch (e) { caught.push(e.name) }
const o = { get x() { return this.x } }
try { o.x } catch (e) { caught.push(e.name) }
const p = new Proxy({}, { get(t, k) { return p[k] } })
try { p.x } catch (e) { caught.push(e.name) }
const m = () => [1].map(m)
try { m() } catch (e) { caught.push(e.name) }
const s = { toString() { return String(this) } }
try { String(s) } catch (e) { caught.push(e.name) }
if (caught.length !== 6 || caught.some((n) => n !== "InternalError") || d < 100) throw new Error(caught.join())
return d`,
    "completed",
  ],
  ["output too large", 'return "x".repeat(70000)', "OutputTooLarge"],
  [
    "constructor escape finds no host",
    'const g = (function () {}).constructor("return this")(); return [typeof g.fetch, typeof g.window, typeof g.self, typeof g.postMessage, typeof g.importScripts]',
    "completed",
  ],
  ["dynamic import", 'await import("data:text/javascript,export default 1")', "Error"],
  ["unknown binding", "return await apps.call('__proto__.x', {})", "Error"],
];

test("a hostile sample is contained in the browser, and the next run still works", async ({ page }) => {
  await openLab(page);
  for (const [name, code, reason] of HOSTILE) {
    const limits = { ...LIMITS, timeoutMs: 500, memoryMb: 16 };
    const result = await page.evaluate(
      async ([c, l]) =>
        window.openbotLab!.run({ code: c, time: 0, seed: 1, limits: l, bindings: ["demo.echo"], vaultNames: [] }, {}),
      [code, limits] as const,
    );
    const got = result.outcome.status === "failed" ? result.outcome.reason : result.outcome.status;
    expect(got, `${name}: ${JSON.stringify(result.outcome)}`).toBe(reason);
    if (name.startsWith("constructor"))
      expect(JSON.parse((result.outcome as { valueJson: string }).valueJson)).toEqual([
        "undefined",
        "undefined",
        "undefined",
        "undefined",
        "undefined",
      ]);
    const next = await page.evaluate(async () =>
      window.openbotLab!.run(
        {
          code: "return 1 + 1",
          time: 0,
          seed: 1,
          limits: { timeoutMs: 1000, memoryMb: 16, outputBytes: 1024, maxPendingCalls: 1 },
          bindings: [],
          vaultNames: [],
        },
        {},
      ),
    );
    expect(next.outcome, `${name}: the next run`).toMatchObject({ status: "completed", valueJson: "2" });
  }
});

test("the page compiles the .wasm once and its sandbox workers instantiate that module without fetching it", async ({
  page,
}) => {
  const workers: import("@playwright/test").Worker[] = [];
  page.on("worker", (worker) => workers.push(worker));
  await openLab(page);
  const rows = Array.from({ length: 2000 }, (_, i) => ({ id: i, name: `row ${i} \u20ac` }));
  const bigText = JSON.stringify(rows).replace('{"id":1,', '{"__proto__":{"x":1},"id":1,');
  // The same value as all-ASCII text (the euro sign escaped): it takes the transcoder's ASCII fast path.
  const asciiText = bigText.replace(/\u20ac/g, "\\u20ac");
  expect(/[^\u0000-\u007f]/.test(asciiText)).toBe(false);
  const program = (text: string) => `const r = await apps.demo.echo({ text: "${text}" });
    return [r.length, r[0].name, Object.hasOwn(r[1], "__proto__"), ({}).x === undefined, Object.getPrototypeOf(r[1]) === Object.prototype];`;
  const key = (text: string) => `demo.echo ${canonicalJson(JSON.stringify({ text }))}`;
  const runs = [
    { code: program("big"), answers: { [key("big")]: { type: "ok", resultJson: bigText } as CallOutcome } },
    { code: program("ascii"), answers: { [key("ascii")]: { type: "ok", resultJson: asciiText } as CallOutcome } },
  ];
  // Two runs at once need two workers.
  const results = await page.evaluate(
    async ([runs, limits]) =>
      Promise.all(
        runs.map(({ code, answers }) =>
          window.openbotLab!.run({ code, time: 0, seed: 1, limits, bindings: ["demo.echo"], vaultNames: [] }, answers),
        ),
      ),
    [runs, LIMITS] as const,
  );
  for (const result of results) {
    expect(result.outcome.status, JSON.stringify(result.outcome)).toBe("completed");
    expect(JSON.parse((result.outcome as { valueJson: string }).valueJson)).toEqual([
      2000,
      "row 0 \u20ac",
      true,
      true,
      true,
    ]);
  }
  const wasmOf = () =>
    performance
      .getEntriesByType("resource")
      .map((entry) => entry.name)
      .filter((name) => new URL(name).pathname.endsWith(".wasm"));
  expect(await page.evaluate(wasmOf)).toHaveLength(1);
  expect(workers.length).toBeGreaterThanOrEqual(2);
  for (const worker of workers) expect(await worker.evaluate(wasmOf)).toEqual([]);
});

/**
 * The browser benchmark's page: the page path (SandboxSupervisor over Web Workers of worker/browser-worker.ts,
 * tools answered by this page) beside bare quickjs-emscripten in a Web Worker, the same workloads as the
 * Node benchmark, interleaved turns, second of two back-to-back runs timed; plus cold start (new supervisor
 * and worker: module load + first run). Exposes `runBench()` for scripts/bench-sandbox-browser.mjs.
 */
import { spawnSandboxWorker } from "../../worker/browser-port.ts";
import { SandboxSupervisor } from "../../worker/supervisor.ts";
import { median, ROWS_JSON, WORKLOADS } from "../bench-workloads.mjs";

const LIMITS = { timeoutMs: 10_000, memoryMb: 64, outputBytes: 1 << 20, maxPendingCalls: 128 };
const input = (code) => ({
  code,
  time: 0,
  seed: 1,
  limits: LIMITS,
  bindings: ["bench.echo", "bench.rows", "bench.slow"],
  vaultNames: [],
});

function answer(binding, argsJson) {
  if (binding === "bench.rows") return Promise.resolve({ type: "ok", resultJson: ROWS_JSON });
  if (binding === "bench.slow")
    return new Promise((resolve) => setTimeout(() => resolve({ type: "ok", resultJson: '{"ok":true}' }), 20));
  return Promise.resolve({ type: "ok", resultJson: argsJson });
}

/** When the last spawned sandbox worker was created, answered "ready" and posted its first "done" (cold-start phases). */
const phases = { spawned: 0, ready: 0, firstDone: 0 };

function spawnSandbox() {
  phases.spawned = performance.now();
  phases.ready = phases.firstDone = 0;
  // The page's own loader (worker/browser-port.ts): the .wasm is compiled once per page and shared.
  const port = spawnSandboxWorker(
    new URL("./sandbox-worker.js", location.href),
    new URL("./emscripten-module.wasm", location.href),
  );
  port.onMessage((message) => {
    if (message?.type === "ready" && !phases.ready) phases.ready = performance.now();
    if (message?.type === "done" && !phases.firstDone) phases.firstDone = performance.now();
  });
  return port;
}

function bareWorker() {
  const worker = new Worker("./bare-worker.js", { type: "module" });
  const runs = new Map();
  let nextId = 0;
  const ready = new Promise((resolve) => {
    worker.addEventListener("message", (event) => {
      const message = event.data;
      if (message.type === "ready") resolve();
      else if (message.type === "call") {
        answer(message.binding, message.argsJson).then((result) =>
          worker.postMessage({ type: "answer", callId: message.callId, resultJson: result.resultJson }),
        );
      } else if (message.type === "done") {
        const settle = runs.get(message.id);
        runs.delete(message.id);
        settle(message.value);
      }
    });
  });
  const run = (code) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      runs.set(id, (value) => (value === "failed" ? reject(new Error("bare run failed")) : resolve(value)));
      worker.postMessage({ type: "run", id, code });
    });
  return { ready, run, terminate: () => worker.terminate() };
}

async function completed(promise) {
  const outcome = await promise;
  if (outcome.status !== "completed") throw new Error(`page run failed: ${JSON.stringify(outcome).slice(0, 300)}`);
  return outcome;
}

async function coldStarts(samples) {
  const ours = [];
  const bare = [];
  const toReady = [];
  const firstDone = [];
  for (let i = 0; i < samples; i++) {
    let started = performance.now();
    const supervisor = new SandboxSupervisor({ spawn: spawnSandbox });
    await completed(supervisor.run(input("return 1+1"), { call: (req) => answer(req.binding, req.argsJson) }));
    ours.push(performance.now() - started);
    toReady.push(phases.ready - started);
    firstDone.push(phases.firstDone - started);
    supervisor.dispose();
    started = performance.now();
    const worker = bareWorker();
    await worker.ready;
    await worker.run("return 1+1");
    bare.push(performance.now() - started);
    worker.terminate();
  }
  return {
    first: { ours: ours[0], bare: bare[0], ready: toReady[0], firstDone: firstDone[0] },
    ours: median(ours.slice(1)),
    bare: median(bare.slice(1)),
    // Medians after the first: new supervisor → worker's "ready" (script + WASM load), → first "done" (warm-up or the run).
    phases: { ready: median(toReady.slice(1)), firstDone: median(firstDone.slice(1)) },
  };
}

window.runBench = async (options = {}) => {
  const cold = await coldStarts(9);
  if (options.coldOnly)
    return {
      cold,
      results: {},
      crossOriginIsolated: self.crossOriginIsolated === true,
      userAgent: navigator.userAgent,
    };
  const supervisor = new SandboxSupervisor({ spawn: spawnSandbox, maxWorkers: 8, maxIdle: 8 });
  await supervisor.prewarm(LIMITS, 8);
  const bare = bareWorker();
  await bare.ready;
  const handlers = { call: (req) => answer(req.binding, req.argsJson) };
  const systems = [
    ["bare", (code) => bare.run(code)],
    ["page", (code) => completed(supervisor.run(input(code), handlers))],
  ];
  const results = {};
  for (const workload of WORKLOADS) {
    const once = (runOne) =>
      workload.parallel
        ? Promise.all(Array.from({ length: workload.parallel }, () => runOne(workload.code)))
        : runOne(workload.code);
    const times = { bare: [], page: [] };
    const n = Math.max(5, Math.ceil(workload.n / 2));
    for (let i = 0; i < workload.warm + n; i++) {
      for (let k = 0; k < systems.length; k++) {
        const [name, runOne] = systems[(i + k) % systems.length];
        await once(runOne);
        const started = performance.now();
        await once(runOne);
        if (i >= workload.warm) times[name].push(performance.now() - started);
      }
    }
    results[workload.name] = { bare: median(times.bare), page: median(times.page) };
  }
  supervisor.dispose();
  bare.terminate();
  return { cold, results, crossOriginIsolated: self.crossOriginIsolated === true, userAgent: navigator.userAgent };
};

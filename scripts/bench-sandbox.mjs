/**
 * `npm run bench:sandbox`: the six workloads of issue 16 through bare quickjs-emscripten (the floor, measured
 * in this same run), the in-process engine (dist/worker/engine.mjs) and the server path (SandboxSupervisor
 * over Node worker threads, dist/worker/{supervisor,node-port}.mjs), as per-workload medians and ratios, with
 * the fastest peer (UTCP code-mode on isolated-vm) measured in the same run when `npm run bench:peer-setup` has
 * set it up (scripts/bench-peer-client.mjs; `--peer` requires it, `--no-peer` leaves it out; without it, the
 * issue's fixed peer figures), the goals, and the server path's messages per run and µs per call. `-- --browser` runs the page path in Chromium instead
 * (scripts/bench-sandbox-browser.mjs). Informational only: nothing here fails on a slow machine.
 */
import os from "node:os";
import RELEASE_SYNC from "@jitl/quickjs-wasmfile-release-sync";
import { newQuickJSWASMModuleFromVariant, newVariant } from "quickjs-emscripten-core";
import { PEER_HINT, startPeer } from "./bench-peer-client.mjs";
import { printSandboxTable } from "./bench-sandbox-report.mjs";
import { fmt, median, ROWS_JSON, WORKLOADS } from "./bench-workloads.mjs";

if (process.argv.includes("--browser")) {
  await import("./bench-sandbox-browser.mjs");
} else {
  await main();
}

async function main() {
  const { loadEngine } = await import("../dist/worker/engine.mjs");
  const { SandboxSupervisor } = await import("../dist/worker/supervisor.mjs");
  const { spawnNodeWorker } = await import("../dist/worker/node-port.mjs");

  const LIMITS = { timeoutMs: 10_000, memoryMb: 64, outputBytes: 1 << 20, maxPendingCalls: 128 };
  const input = (code) => ({
    code,
    time: 0,
    seed: 1,
    limits: LIMITS,
    bindings: ["bench.echo", "bench.rows", "bench.slow"],
    vaultNames: [],
  });
  const answer = (binding, argsJson) => {
    if (binding === "bench.rows") return Promise.resolve({ type: "ok", resultJson: ROWS_JSON });
    if (binding === "bench.slow")
      return new Promise((resolve) => setTimeout(() => resolve({ type: "ok", resultJson: '{"ok":true}' }), 20));
    return Promise.resolve({ type: "ok", resultJson: argsJson });
  };
  const handlers = { call: (req) => answer(req.binding, req.argsJson) };
  const completed = async (promise) => {
    const outcome = await promise;
    if (outcome.status !== "completed") throw new Error(`bench run failed: ${JSON.stringify(outcome).slice(0, 300)}`);
    return outcome;
  };

  // Bare quickjs-emscripten: a fresh runtime + context per run, one host function, nothing else.
  let bareModule = await newQuickJSWASMModuleFromVariant(
    newVariant(RELEASE_SYNC, { wasmMemory: new WebAssembly.Memory({ initial: 72 * 16, maximum: 72 * 16 }) }),
  );
  const bareRun = (code) =>
    new Promise((resolve, reject) => {
      const runtime = bareModule.newRuntime();
      const ctx = runtime.newContext();
      let settled = false;
      const check = (promise) => {
        const state = ctx.getPromiseState(promise);
        if (state.type === "pending") return;
        settled = true;
        const text = state.type === "fulfilled" ? ctx.getString(state.value) : undefined;
        (state.value ?? state.error).dispose();
        promise.dispose();
        ctx.dispose();
        runtime.dispose();
        text === undefined ? reject(new Error("bare run failed")) : resolve(text);
      };
      let program;
      const call = ctx.newFunction("call", (bindingHandle, argsHandle) => {
        const deferred = ctx.newPromise();
        answer(ctx.getString(bindingHandle), ctx.getString(argsHandle)).then((result) => {
          if (settled) return;
          try {
            const value = ctx.newString(result.resultJson);
            deferred.resolve(value);
            value.dispose();
            deferred.dispose();
            runtime.executePendingJobs();
            check(program);
          } catch (error) {
            settled = true;
            reject(error);
          }
        });
        return deferred.handle;
      });
      ctx.setProp(ctx.global, "call", call);
      call.dispose();
      const source = `(async () => {
        const bind = (name) => async (args) => JSON.parse(await call(name, JSON.stringify(args)));
        const apps = { bench: { echo: bind("bench.echo"), rows: bind("bench.rows"), slow: bind("bench.slow") } };
        return JSON.stringify(await (async () => { ${code} })());
      })()`;
      const result = ctx.evalCode(source);
      if (result.error) {
        result.error.dispose();
        reject(new Error("bare eval failed"));
        return;
      }
      program = result.value;
      runtime.executePendingJobs();
      check(program);
    });

  const engine = await loadEngine({ preloadMemoryMb: LIMITS.memoryMb });
  const inProcess = (code) => completed(engine.run(input(code), handlers));
  // The server path as a server sized for 8 concurrent runs would configure it: 8 workers, all kept warm.
  // Every port counts the messages each way.
  const traffic = { toWorker: 0, fromWorker: 0 };
  const countedWorker = () => {
    const port = spawnNodeWorker();
    return {
      ...port,
      post: (message) => {
        traffic.toWorker += 1;
        port.post(message);
      },
      onMessage: (listener) =>
        port.onMessage((message) => {
          traffic.fromWorker += 1;
          listener(message);
        }),
    };
  };
  const supervisor = new SandboxSupervisor({ spawn: countedWorker, maxWorkers: 8, maxIdle: 8 });
  const rssBefore = process.memoryUsage().rss;
  await supervisor.prewarm(LIMITS, 8);
  const rssPerWorker = (process.memoryUsage().rss - rssBefore) / 8;
  const server = (code) => completed(supervisor.run(input(code), handlers));

  // The fastest peer (UTCP code-mode on isolated-vm) in a Node 22 child process, when .bench-peer/ is set up
  // (scripts/bench-peer-client.mjs); null without it.
  const peer = await startPeer(
    process.argv.includes("--peer") ? true : process.argv.includes("--no-peer") ? false : undefined,
  );

  // The systems take turns within each iteration (order rotating), so a load change on this shared
  // machine hits them all alike and the ratios stay comparable; each turn is two runs back to back and
  // only the second is timed (no idle time before it, as on a busy server).
  const systems = Object.entries({ bare: bareRun, inProcess, server });
  const results = {};
  for (const workload of WORKLOADS) {
    const once = (runOne) =>
      workload.parallel
        ? Promise.all(Array.from({ length: workload.parallel }, () => runOne(workload.code)))
        : runOne(workload.code);
    // Twice in a row, the second timed: a busy server never idles between runs. The peer times its own turn.
    const turns = systems.map(([name, runOne]) => [
      name,
      async () => {
        await once(runOne);
        const started = performance.now();
        await once(runOne);
        return performance.now() - started;
      },
    ]);
    if (peer) turns.push(["peer", () => peer.turn(workload.name)]);
    const times = Object.fromEntries(turns.map(([name]) => [name, []]));
    for (let i = 0; i < workload.warm + workload.n; i++) {
      for (let k = 0; k < turns.length; k++) {
        const [name, turn] = turns[(i + k) % turns.length];
        const ms = await turn();
        if (i >= workload.warm) times[name].push(ms);
      }
    }
    results[workload.name] = Object.fromEntries(turns.map(([name]) => [name, median(times[name])]));
  }
  peer?.close();

  // Messages per run on the server path (counts, so they hold on a loaded machine), one run at a time.
  const perRun = {};
  for (const workload of WORKLOADS.filter((w) => ["start", "fanout", "sequential"].includes(w.name))) {
    await server(workload.code);
    const before = { ...traffic };
    const runs = 20;
    for (let i = 0; i < runs; i++) await server(workload.code);
    perRun[workload.name] = {
      toWorker: (traffic.toWorker - before.toWorker) / runs,
      fromWorker: (traffic.fromWorker - before.fromWorker) / runs,
    };
  }

  // Logging: µs per console.log line, a 500-line program less the same loop without the log, one run at a time.
  const LOG_LINES = 500;
  const logged = `for (let i = 0; i < ${LOG_LINES}; i++) console.log("line " + i); return 1;`;
  const silent = `let s = 0; for (let i = 0; i < ${LOG_LINES}; i++) s += ("line " + i).length; return 1;`;
  const perLine = {};
  for (const [name, runOne] of [
    ["in-process", inProcess],
    ["server path", server],
  ]) {
    const withLog = [];
    const without = [];
    for (let i = 0; i < 25; i++) {
      let started = performance.now();
      await runOne(logged);
      if (i >= 5) withLog.push(performance.now() - started);
      started = performance.now();
      await runOne(silent);
      if (i >= 5) without.push(performance.now() - started);
    }
    perLine[name] = ((median(withLog) - median(without)) / LOG_LINES) * 1000;
  }

  // Memory: the smallest memory cap (whole MiB of WebAssembly memory beyond the module's fixed 8 MiB
  // baseline, the engine's own `memoryMb`) under which each workload's run still completes, by bisection in
  // an untimed pass; for bare, a module on a fixed memory of that size. One run at a time (for concurrent, the 8 runs share one module: in-process, so do ours).
  const memory = {};
  const bareModules = new Map();
  const bareAt = async (mb) => {
    if (!bareModules.has(mb)) {
      const pages = Math.max(16, mb + 8) * 16;
      bareModules.set(
        mb,
        newQuickJSWASMModuleFromVariant(
          newVariant(RELEASE_SYNC, { wasmMemory: new WebAssembly.Memory({ initial: pages, maximum: pages }) }),
        ),
      );
    }
    return bareModules.get(mb);
  };
  const fits = {
    bare: async (workload, mb) => {
      const quickjs = await bareAt(mb);
      const saved = bareModule;
      bareModule = quickjs;
      try {
        const runs = workload.parallel
          ? Promise.all(Array.from({ length: workload.parallel }, () => bareRun(workload.code)))
          : bareRun(workload.code);
        let timer;
        const stuck = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error("stuck")), 10_000)));
        await Promise.race([runs, stuck]).finally(() => clearTimeout(timer));
        return true;
      } catch {
        return false;
      } finally {
        bareModule = saved;
      }
    },
    inProcess: async (workload, mb) => {
      const run = () => engine.run({ ...input(workload.code), limits: { ...LIMITS, memoryMb: mb } }, handlers);
      const outcomes = await (workload.parallel
        ? Promise.all(Array.from({ length: workload.parallel }, run))
        : Promise.all([run()]));
      return outcomes.every((outcome) => outcome.status === "completed");
    },
  };
  for (const workload of WORKLOADS) {
    memory[workload.name] = {};
    for (const system of ["bare", "inProcess"]) {
      let low = 0;
      let high = 64;
      while (high - low > 1) {
        const mid = Math.floor((low + high) / 2);
        if (await fits[system](workload, mid)) high = mid;
        else low = mid;
      }
      memory[workload.name][system] = high;
      bareModules.clear();
    }
  }
  supervisor.dispose();

  const cpu = os.cpus()[0]?.model ?? "unknown cpu";
  console.log(
    `machine: ${cpu}, ${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(2)}, node ${process.version}`,
  );
  printSandboxTable(results, memory, peer?.describe, PEER_HINT);
  console.log(
    "memory cap/run: smallest whole-MiB memory limit (beyond the module's 8 MiB baseline) under which the run completes; 1 = the minimum",
  );
  for (const [name, m] of Object.entries(perRun)) {
    console.log(
      `server path, ${name}: ${fmt(m.toWorker + m.fromWorker, 1)} messages per run (${fmt(m.fromWorker, 1)} from the worker, ${fmt(m.toWorker, 1)} to it)`,
    );
  }
  console.log(
    `console.log: ${Object.entries(perLine)
      .map(([name, us]) => `${name} ${fmt(us, 1)} µs`)
      .join(", ")} per line (${LOG_LINES} lines in one run, less the same loop without logging)`,
  );
  const perCall = (results.sequential.server - results.start.server) / 20;
  const perCallBare = (results.sequential.bare - results.start.bare) / 20;
  console.log(
    `server path: ${fmt(perCall * 1000, 0)} µs per awaited call ((sequential − start) / 20; bare in-process: ${fmt(perCallBare * 1000, 0)} µs)`,
  );
  console.log(
    `server path: each pooled worker thread adds ${fmt(rssPerWorker / 1048576, 1)} MiB of process RSS when idle (8 prewarmed)`,
  );
}

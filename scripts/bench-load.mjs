/**
 * `npm run bench:load` (`-- --quick` for a short run): API runs under load against the BUILT server
 * (scripts/server.mjs, each instance on its own fresh data dir). Scenario 1: one instance on the embedded
 * PGlite. Scenario 2 (only with OPENBOT_TEST_DATABASE_URL or `--database-url=postgres://…`): two instances
 * on a fresh database created on that Postgres (dropped afterwards), behind a round-robin loopback proxy
 * that every request goes through. In each, N concurrent `POST /v1/chats/:id/code-runs` (200;
 * quick: 40), each a program of 20 nested calls to the built-in Work calendar, once sequential and once
 * with Promise.all. Prints errors (goal 0), runs/s, p50/p95 run latency, nested calls/s end to end (goal
 * ≥ 1,000/s on one instance), peak RSS (all instances, worker threads included) and /v1/health p99 while
 * under load (goal ≤ 500 ms), and the work per nested call read from each instance's /v1/metrics
 * (openbot_db_work_total, openbot_sealed_values_total): statements, round trips, transactions, seal and open, a run's
 * own overhead shared by its 20 calls. `--rounds=N` measures each program N times, interleaved, on the same
 * instances (this kind of machine reads up to ±20 % apart between identical runs) and judges the goals on
 * all of them: errors in every round, calls/s by the median round, health p99 by the worst. Before the measured rounds each scenario runs a warm-up round of each
 * program (100 runs; quick: 20; `--no-warm-up`: none), not counted. Informational: the exit code is 0 unless the bench could not run.
 * Ports: OPENBOT_BENCH_PORT (default 5540) and the next two (the proxy). Code Mode caps as JSON in
 * OPENBOT_BENCH_CODE_MODE (default '{"maxServerRuns":8,"maxServerRunsPerUser":8,"maxQueuedRunsPerUser":1000}').
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { apiRequest, waitForHealth as waitForServer } from "./bench/server-http.mjs";

const args = process.argv.slice(2);
const QUICK = args.includes("--quick");
const DB_URL =
  args.find((a) => a.startsWith("--database-url="))?.slice("--database-url=".length) ??
  process.env.OPENBOT_TEST_DATABASE_URL;
const PORT = Number(process.env.OPENBOT_BENCH_PORT ?? 5540);
const ADMIN_TOKEN = "obk_bench-admin-token-0123456789";
const RUNS = QUICK ? 40 : 200;
/** Runs of each program before the measured rounds, not counted (see load()). */
const WARM_RUNS = args.includes("--no-warm-up") ? 0 : QUICK ? 20 : 100;
const CALLS = 20;
const ROUNDS = Math.max(1, Number(args.find((a) => a.startsWith("--rounds="))?.slice("--rounds=".length) ?? 1) || 1);
const GOALS = { errors: 0, callsPerSecond: 1000, healthP99Ms: 500 };
const CODE_MODE = JSON.parse(
  process.env.OPENBOT_BENCH_CODE_MODE ?? '{"maxServerRuns":8,"maxServerRunsPerUser":8,"maxQueuedRunsPerUser":1000}',
);
const PROGRAMS = {
  sequential: `let n = 0
for (let i = 0; i < ${CALLS}; i++) n += (await apps.work_calendar.list_events({ day: "2026-10-23" })).structuredContent.events.length
return n`,
  "Promise.all": `const all = await Promise.all(Array.from({ length: ${CALLS} }, () => apps.work_calendar.list_events({ day: "2026-10-23" })))
return all.reduce((n, r) => n + r.structuredContent.events.length, 0)`,
};

if (!existsSync(".next/BUILD_ID")) {
  console.error("No build found: run `npm run build` first.");
  process.exit(2);
}

const started = [];
process.on("exit", () => {
  for (const s of started) if (s.child.exitCode === null) s.child.kill("SIGTERM");
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130));

function startInstance(port, env) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "openbot-bench-load-"));
  // OPENBOT_BENCH_CPU_PROF=<dir>: each instance writes a V8 CPU profile there when it stops.
  const profile = process.env.OPENBOT_BENCH_CPU_PROF;
  const flags = profile ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(profile)}`] : [];
  const child = spawn(process.execPath, [...flags, "scripts/server.mjs"], {
    env: {
      ...process.env,
      ...env,
      PORT: String(port),
      HOST: "127.0.0.1",
      OPENBOT_DATA_DIR: dataDir,
      OPENBOT_ADMIN_TOKEN: ADMIN_TOKEN,
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const instance = { child, base: `http://127.0.0.1:${port}`, dataDir };
  started.push(instance);
  return instance;
}

async function stopInstance(instance) {
  if (instance.child.exitCode === null) {
    const exited = new Promise((resolve) => instance.child.once("exit", resolve));
    instance.child.kill("SIGTERM");
    await exited;
  }
  rmSync(instance.dataDir, { recursive: true, force: true });
}

const api = (base, method, route, body) => apiRequest(base, ADMIN_TOKEN, method, route, body);
const waitForHealth = (instance) => waitForServer(instance.base, instance.child, 900);

function rssKb(pid) {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** CPU ms (user + system) of a process's main thread and of the whole process (all threads), from /proc. */
function cpuMs(pid) {
  const ticks = (file) => {
    try {
      // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
      const fields = readFileSync(file, "utf8").split(") ")[1].split(" ");
      return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
    } catch {
      return 0;
    }
  };
  return { main: ticks(`/proc/${pid}/task/${pid}/stat`), all: ticks(`/proc/${pid}/stat`) };
}

const cpuOf = (instances) =>
  instances.reduce(
    (sum, i) => {
      const c = cpuMs(i.child.pid);
      return { main: sum.main + c.main, all: sum.all + c.all };
    },
    { main: 0, all: 0 },
  );

/** Samples summed RSS and every /v1/health latency (one probe at a time per instance) until stopped. */
function sampler(instances) {
  let running = true;
  const health = [];
  let peakRssKb = 0;
  const loops = [
    (async () => {
      while (running) {
        peakRssKb = Math.max(
          peakRssKb,
          instances.reduce((sum, i) => sum + rssKb(i.child.pid), 0),
        );
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })(),
    ...instances.map(async (instance) => {
      while (running) {
        const t0 = performance.now();
        await fetch(`${instance.base}/v1/health`).then(
          (r) => r.arrayBuffer(),
          () => undefined,
        );
        health.push(performance.now() - t0);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }),
  ];
  return async () => {
    running = false;
    await Promise.all(loops);
    return { peakRssKb, health };
  };
}

/** This instance's cumulative work counters from /v1/metrics. */
async function workCounters(instance) {
  const r = await fetch(`${instance.base}/v1/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  const text = await r.text();
  const value = (series) => {
    const line = text.split("\n").find((l) => l.startsWith(`${series} `));
    return line === undefined ? 0 : Number(line.slice(series.length + 1));
  };
  return {
    statements: value('openbot_db_work_total{kind="statements"}'),
    roundTrips: value('openbot_db_work_total{kind="round_trips"}'),
    transactions: value('openbot_db_work_total{kind="transactions"}'),
    seal: value('openbot_sealed_values_total{op="seal"}'),
    open: value('openbot_sealed_values_total{op="open"}'),
  };
}

async function allCounters(instances) {
  const each = await Promise.all(instances.map(workCounters));
  const sum = {};
  for (const c of each) for (const [k, v] of Object.entries(c)) sum[k] = (sum[k] ?? 0) + v;
  return sum;
}

/** A round-robin HTTP proxy on `port` in front of `instances` (what a load balancer does). */
function startProxy(port, instances) {
  let next = 0;
  // A new connection per request: a reused keep-alive socket the server is closing at that moment would
  // fail the request (a race of the proxy's, not the server's).
  const agent = new http.Agent({ keepAlive: false, maxSockets: 1024 });
  const server = http.createServer((req, res) => {
    const target = new URL(instances[next++ % instances.length].base);
    const upstream = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", (error) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "application/json" });
      res.end(JSON.stringify({ proxy: String(error.code ?? error.message) }));
    });
    req.pipe(upstream);
  });
  return new Promise((resolve) =>
    server.listen(port, "127.0.0.1", () =>
      resolve({
        base: `http://127.0.0.1:${port}`,
        close: () => new Promise((done) => server.close(() => done(agent.destroy()))),
      }),
    ),
  );
}

const percentile = (values, p) => {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

async function load(instances, front, label) {
  const chat = (await api(front, "POST", "/v1/chats", { title: "bench" })).json.id;
  // Warm each instance (first run spawns a sandbox worker, first call loads the App's tool list).
  for (const instance of instances)
    await api(instance.base, "POST", `/v1/chats/${chat}/code-runs`, {
      code: PROGRAMS.sequential,
      reason: "warm-up",
    });
  // Then a warm-up round of each program, not counted: a server that has just started spends about half
  // a core optimizing its hot JavaScript on V8's background threads for its first seconds under load
  // (measured with perf: TurboFan's compiler on the platform threads), which a server that has been up
  // for a while does not. `--no-warm-up` measures a cold server.
  if (WARM_RUNS > 0)
    for (const code of Object.values(PROGRAMS))
      await Promise.all(
        Array.from({ length: WARM_RUNS }, (_, n) =>
          api(front, "POST", `/v1/chats/${chat}/code-runs`, { code, reason: `warm-up ${n}` }),
        ),
      );
  const rows = [];
  for (let round = 1; round <= ROUNDS; round++)
    for (const [mode, code] of Object.entries(PROGRAMS)) {
      const counted = await allCounters(instances);
      const cpu0 = cpuOf(instances);
      const client0 = process.cpuUsage();
      const stop = sampler(instances);
      const t0 = performance.now();
      const latencies = [];
      const failures = new Map();
      await Promise.all(
        Array.from({ length: RUNS }, async (_, n) => {
          const r0 = performance.now();
          const r = await api(front, "POST", `/v1/chats/${chat}/code-runs`, {
            code,
            reason: `bench ${n}`,
          }).catch((error) => ({ status: 0, json: { error: String(error) } }));
          latencies.push(performance.now() - r0);
          const ok = r.status === 200 && r.json.status === "Completed" && r.json.calls?.length === CALLS;
          if (!ok) {
            const why =
              r.status === 200
                ? `${r.json.status}: ${r.json.result?.message ?? r.json.calls?.length}`
                : `HTTP ${r.status}: ${JSON.stringify(r.json).slice(0, 120)}`;
            failures.set(why, (failures.get(why) ?? 0) + 1);
          }
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      const cpu1 = cpuOf(instances);
      const client = process.cpuUsage(client0);
      const { peakRssKb, health } = await stop();
      const errors = [...failures.values()].reduce((a, b) => a + b, 0);
      const after = await allCounters(instances);
      const per = (key) => ((after[key] - counted[key]) / (RUNS * CALLS)).toFixed(2);
      rows.push({
        scenario: label,
        mode,
        ...(ROUNDS > 1 ? { round } : {}),
        runs: RUNS,
        errors,
        "runs/s": (RUNS / seconds).toFixed(1),
        "p50 ms": Math.round(percentile(latencies, 50)),
        "p95 ms": Math.round(percentile(latencies, 95)),
        "calls/s": Math.round(((RUNS - errors) * CALLS) / seconds),
        "peak RSS MB": Math.round(peakRssKb / 1024),
        "health p99 ms": Math.round(percentile(health, 99)),
        "health n": health.length,
        load: os.loadavg()[0].toFixed(1),
        // CPU of the server processes over the phase per nested call (main thread; all threads: the
        // database thread and the sandbox workers too), from /proc (Linux only, else 0).
        "main CPU ms/call": ((cpu1.main - cpu0.main) / (RUNS * CALLS)).toFixed(3),
        "CPU ms/call": ((cpu1.all - cpu0.all) / (RUNS * CALLS)).toFixed(3),
        // This bench's own CPU (its client and its health probes share the servers' cores).
        "client CPU ms/call": ((client.user + client.system) / 1000 / (RUNS * CALLS)).toFixed(3),
        "stmts/call": per("statements"),
        "trips/call": per("roundTrips"),
        "tx/call": per("transactions"),
        "seal/call": per("seal"),
        "open/call": per("open"),
      });
      for (const [why, count] of failures) console.log(`  ${label} ${mode}: ${count} × ${why}`);
    }
  return rows;
}

async function scenario(label, count, env) {
  // One after another: the first one migrates a fresh database and creates the admin, the next finds them.
  const instances = [];
  let proxy;
  try {
    for (let i = 0; i < count; i++) {
      instances.push(startInstance(PORT + i, env));
      await waitForHealth(instances[i]);
    }
    const base = instances[0].base;
    proxy = count > 1 ? await startProxy(PORT + count, instances) : undefined;
    const settings = (await api(base, "GET", "/v1/platform/settings")).json;
    const patched = await api(base, "PATCH", "/v1/platform/settings", {
      expectedVersion: settings.version,
      codeMode: { enabled: true, ...CODE_MODE },
    });
    if (patched.status !== 200) throw new Error(`settings: ${JSON.stringify(patched.json).slice(0, 300)}`);
    return await load(instances, proxy?.base ?? base, label);
  } finally {
    await proxy?.close();
    await Promise.all(instances.map(stopInstance));
  }
}

const rows = [];
console.log(
  `bench:load${QUICK ? " --quick" : ""}${ROUNDS > 1 ? ` --rounds=${ROUNDS}` : ""}: ${RUNS} concurrent API runs × ${CALLS} calls, after a warm-up round of ${WARM_RUNS} runs of each program (not counted; --no-warm-up: none); caps ${JSON.stringify(CODE_MODE)}; ` +
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")} on ${os.cpus().length} cores`,
);
rows.push(...(await scenario("1 × PGlite", 1, {})));
console.table(rows);
if (DB_URL) {
  // Two instances on one fresh database (created here, dropped afterwards) share the encryption key.
  const name = `openbot_bench_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: DB_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(DB_URL);
  url.pathname = `/${name}`;
  try {
    rows.push(
      ...(await scenario("2 × Postgres", 2, {
        DATABASE_URL: url.toString(),
        OPENBOT_ENCRYPTION_KEY: randomBytes(32).toString("hex"),
      })),
    );
  } finally {
    await admin.query(`drop database if exists ${name} with (force)`).catch(() => undefined);
    await admin.end();
  }
} else {
  console.log("(2 instances on Postgres: set OPENBOT_TEST_DATABASE_URL or pass --database-url=postgres://…)");
}
console.table(rows);
const mark = (ok) => (ok ? "met" : "NOT met");
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : Math.round((sorted[mid - 1] + sorted[mid]) / 2);
};
// One verdict per scenario and program over its rounds: errors in all, calls/s by the median, health by the worst.
const groups = new Map();
for (const r of rows) {
  const key = `${r.scenario} ${r.mode}`;
  groups.set(key, [...(groups.get(key) ?? []), r]);
}
for (const [key, rounds] of groups) {
  const errors = rounds.reduce((n, r) => n + r.errors, 0);
  const calls = rounds.map((r) => r["calls/s"]);
  const callsMedian = median(calls);
  const health = Math.max(...rounds.map((r) => r["health p99 ms"]));
  const spread = rounds.length > 1 ? ` (median of ${rounds.length} rounds: ${calls.join(", ")})` : "";
  console.log(
    `${key}: errors ${errors} (goal ${GOALS.errors}: ${mark(errors === GOALS.errors)}); ` +
      `calls/s ${callsMedian}${spread} (goal ≥ ${GOALS.callsPerSecond}: ${mark(callsMedian >= GOALS.callsPerSecond)}); ` +
      `health p99 ${health} ms${rounds.length > 1 ? " (worst round)" : ""} (goal ≤ ${GOALS.healthP99Ms}: ${mark(health <= GOALS.healthP99Ms)})`,
  );
}

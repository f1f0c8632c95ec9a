/**
 * Prometheus metrics (prom-client, text format), read at `GET /v1/metrics` by admins' keys. Counters and
 * histograms are fed where things happen (App calls, decisions); gauges are read from the platform at
 * scrape time: runs by status (one grouped query), the run queue, the sandbox pool and the database pool.
 * The registry is kept on globalThis: Next loads instrumentation and each route as separate module graphs,
 * and all of them must feed the one registry a scrape reads.
 */
import "server-only";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Platform } from "./platform";

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const WAIT_BUCKETS = [1, 5, 15, 30, 60, 300, 900, 3600, 4 * 3600, 24 * 3600];

interface Metrics {
  registry: Registry;
  appCall: Histogram<"connection" | "outcome">;
  decisionWait: Histogram<"decision">;
  runs: Gauge<"status">;
  runQueue: Gauge<"state">;
  sandbox: Gauge<"state">;
  dbPool: Gauge<"state">;
  dbWork: Counter<"kind">;
  sealed: Counter<"op">;
  sealCounts: { seal: number; open: number };
}

const KEY = Symbol.for("openbot.metrics");

function make(): Metrics {
  const registry = new Registry();
  return {
    registry,
    appCall: new Histogram({
      name: "openbot_app_call_duration_seconds",
      help: "App calls (tool calls, resource and prompt reads) from send to answer, by connection id and outcome.",
      labelNames: ["connection", "outcome"],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    decisionWait: new Histogram({
      name: "openbot_decision_wait_seconds",
      help: "Time from a decision's request to a person's answer, by answer (allowed, denied).",
      labelNames: ["decision"],
      buckets: WAIT_BUCKETS,
      registers: [registry],
    }),
    runs: new Gauge({
      name: "openbot_code_runs",
      help: "Code runs in the database by status.",
      labelNames: ["status"],
      registers: [registry],
    }),
    runQueue: new Gauge({
      name: "openbot_server_runs",
      help: "Server-side runs of this instance: admitted (running) and waiting for a slot (queued).",
      labelNames: ["state"],
      registers: [registry],
    }),
    sandbox: new Gauge({
      name: "openbot_sandbox_workers",
      help: "The sandbox worker pool of this instance: workers alive and runs waiting for one.",
      labelNames: ["state"],
      registers: [registry],
    }),
    dbPool: new Gauge({
      name: "openbot_db_pool_connections",
      help: "The database pool of this instance: connections open, idle, and queries waiting for one.",
      labelNames: ["state"],
      registers: [registry],
    }),
    // Counts since the instance started: counters, so `rate()` applies.
    dbWork: new Counter({
      name: "openbot_db_work_total",
      help: "What this instance asked of its database since it started: statements, transactions, round trips.",
      labelNames: ["kind"],
      registers: [registry],
    }),
    sealed: new Counter({
      name: "openbot_sealed_values_total",
      help: "Values this instance encrypted (seal) and decrypted (open) since it started.",
      labelNames: ["op"],
      registers: [registry],
    }),
    sealCounts: { seal: 0, open: 0 },
  };
}

function metrics(): Metrics {
  const store = globalThis as { [KEY]?: Metrics };
  store[KEY] ??= make();
  return store[KEY];
}

/** One App call's latency; `outcome` is "ok" or the failure's reason (timeout, unavailable, …). */
export function observeAppCall(connectionId: string, outcome: string, seconds: number): void {
  metrics().appCall.observe({ connection: connectionId, outcome }, seconds);
}

/** One value sealed or opened (a plain counter: it is on every call's path). */
export function countSealed(op: "seal" | "open"): void {
  metrics().sealCounts[op] += 1;
}

/** How long a decision waited for its answer. */
export function observeDecisionWait(decision: "allowed" | "denied", seconds: number): void {
  metrics().decisionWait.observe({ decision }, Math.max(0, seconds));
}

/** The Prometheus text exposition of every metric, gauges read from `platform` now. */
export async function renderMetrics(platform: Platform): Promise<{ contentType: string; text: string }> {
  const m = metrics();
  const rows = await platform.db.query<{ status: string; n: string | number }>(
    "select status, count(*) as n from code_runs group by status",
  );
  m.runs.reset();
  for (const row of rows) m.runs.set({ status: row.status }, Number(row.n));
  const { running, queued } = platform.admission.counts();
  m.runQueue.set({ state: "running" }, running);
  m.runQueue.set({ state: "queued" }, queued);
  m.sandbox.set({ state: "alive" }, platform.runner.size);
  m.sandbox.set({ state: "queued" }, platform.runner.queued);
  const pool = platform.db.pool();
  m.dbPool.set({ state: "open" }, pool.open);
  m.dbPool.set({ state: "idle" }, pool.idle);
  m.dbPool.set({ state: "waiting" }, pool.waiting);
  m.dbPool.set({ state: "max" }, pool.max);
  const work = platform.db.stats();
  // The counts are kept where they happen (the pool's statistics, the seal counts) and only grow; each
  // scrape shows them as they are now.
  m.dbWork.reset();
  m.dbWork.inc({ kind: "statements" }, work.statements);
  m.dbWork.inc({ kind: "transactions" }, work.transactions);
  m.dbWork.inc({ kind: "round_trips" }, work.roundTrips);
  m.sealed.reset();
  m.sealed.inc({ op: "seal" }, m.sealCounts.seal);
  m.sealed.inc({ op: "open" }, m.sealCounts.open);
  return { contentType: m.registry.contentType, text: await m.registry.metrics() };
}

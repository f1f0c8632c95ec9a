/**
 * Readiness for `GET /v1/health` (public, for load balancers and probes): whether the database answers,
 * how full the database pool and the run queue are. It never waits behind the database: a background
 * probe (`select 1`, one at a time, started every PROBE_EVERY_MS) keeps the latest answer, and a request
 * reports it with its age. Only the first request of a process waits for a probe, at most HEALTH_DB_WAIT_MS.
 * A probe still out after HEALTH_DB_WAIT_MS says `busy` (PGlite's one connection behind a queue of
 * statements): still ready while some probe succeeded within READY_WINDOW_MS; `down` is not ready.
 */
import "server-only";
import type { Platform } from "./platform";

const HEALTH_DB_WAIT_MS = 300;
const PROBE_EVERY_MS = 1_000;
const READY_WINDOW_MS = 30_000;

export interface Readiness {
  ok: boolean;
  database: {
    kind: "pglite" | "postgres";
    state: "up" | "busy" | "down";
    latencyMs: number | null;
    /** How old the answer is: since the last probe ended (or, while `busy`, since the one out began). */
    probeAgeMs: number;
  };
  pool: { open: number; idle: number; waiting: number; max: number };
  runs: { running: number; queued: number };
  sandbox: { workers: number; queued: number };
}

interface Probe {
  state: "up" | "down" | null;
  latencyMs: number | null;
  endedAt: number;
  lastUpAt: number;
  /** When the probe now out began (null: none out). */
  outSince: number | null;
  /** Settles when the first probe has answered. */
  first: Promise<void>;
}

const probes = new WeakMap<Platform, Probe>();

function probeFor(platform: Platform): Probe {
  const known = probes.get(platform);
  if (known) return known;
  let answered: () => void = () => undefined;
  const probe: Probe = {
    state: null,
    latencyMs: null,
    endedAt: 0,
    lastUpAt: 0,
    outSince: null,
    first: new Promise<void>((resolve) => {
      answered = resolve;
    }),
  };
  probes.set(platform, probe);
  platform.every(PROBE_EVERY_MS, async () => {
    if (probe.outSince !== null) return;
    const started = performance.now();
    probe.outSince = Date.now();
    const state = await platform.db.query("select 1").then(
      () => "up" as const,
      () => "down" as const,
    );
    probe.state = state;
    probe.latencyMs = state === "up" ? Math.round(performance.now() - started) : null;
    probe.endedAt = Date.now();
    if (state === "up") probe.lastUpAt = probe.endedAt;
    probe.outSince = null;
    answered();
  });
  return probe;
}

export async function readiness(platform: Platform): Promise<Readiness> {
  const probe = probeFor(platform);
  if (probe.state === null) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([probe.first, new Promise<void>((resolve) => (timer = setTimeout(resolve, HEALTH_DB_WAIT_MS)))]);
    clearTimeout(timer);
  }
  const now = Date.now();
  const slow = probe.outSince !== null && now - probe.outSince >= HEALTH_DB_WAIT_MS;
  const state = probe.state === null || slow ? (probe.state === "down" ? "down" : "busy") : probe.state;
  const ok = state === "up" || (state === "busy" && probe.lastUpAt > 0 && now - probe.lastUpAt < READY_WINDOW_MS);
  return {
    ok,
    database: {
      kind: platform.db.kind,
      state,
      latencyMs: state === "up" ? probe.latencyMs : null,
      probeAgeMs: slow && probe.outSince !== null ? now - probe.outSince : now - probe.endedAt,
    },
    pool: platform.db.pool(),
    runs: platform.admission.counts(),
    sandbox: { workers: platform.runner.size, queued: platform.runner.queued },
  };
}

/**
 * Readiness for `GET /v1/health` (public, for load balancers and probes): whether the database answers,
 * how full the database pool and the run queue are. It stays fast under load: the database probe waits
 * at most HEALTH_DB_WAIT_MS; a database that is only slow (PGlite's one connection behind a queue of
 * statements) is `busy`, still ready while some probe succeeded within READY_WINDOW_MS.
 */
import "server-only";
import type { Platform } from "./platform";

const HEALTH_DB_WAIT_MS = 300;
const READY_WINDOW_MS = 30_000;

export interface Readiness {
  ok: boolean;
  database: { kind: "pglite" | "postgres"; state: "up" | "busy" | "down"; latencyMs: number | null };
  pool: { open: number; idle: number; waiting: number; max: number };
  runs: { running: number; queued: number };
  sandbox: { workers: number; queued: number };
}

let lastUpAt = 0;

export async function readiness(platform: Platform): Promise<Readiness> {
  const started = performance.now();
  const probe = platform.db.query("select 1").then(
    () => {
      lastUpAt = Date.now();
      return "up" as const;
    },
    () => "down" as const,
  );
  let timer: NodeJS.Timeout | undefined;
  const state = await Promise.race([
    probe,
    new Promise<"busy">((resolve) => {
      timer = setTimeout(() => resolve("busy"), HEALTH_DB_WAIT_MS);
    }),
  ]);
  clearTimeout(timer);
  const ok = state === "up" || (state === "busy" && Date.now() - lastUpAt < READY_WINDOW_MS);
  return {
    ok,
    database: {
      kind: platform.db.kind,
      state,
      latencyMs: state === "up" ? Math.round(performance.now() - started) : null,
    },
    pool: platform.db.pool(),
    runs: platform.admission.counts(),
    sandbox: { workers: platform.runner.size, queued: platform.runner.queued },
  };
}

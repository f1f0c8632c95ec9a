/**
 * The infrastructure of the server: database (migrated), key ring, App registry, the sandbox runner and
 * the event bus. It imports no service; `server/boot.ts` composes it with the services (bootstrap, the
 * agent's subscriptions, the sweeper) and keeps the process's one platform on globalThis.
 */
import "server-only";
import { randomUUID } from "node:crypto";
import { availableParallelism } from "node:os";
import path from "node:path";
import { CODE_MODE_RANGES, DEFAULT_CODE_MODE } from "@/contracts/settings";
import { spawnNodeWorker } from "@/worker/node-port";
import { SandboxSupervisor } from "@/worker/supervisor";
import { ConnectionOAuth } from "./apps/oauth/manager";
import { AppRegistry } from "./apps/registry";
import { type Cluster, joinCluster } from "./cluster";
import { decrypt, encrypt, type KeyRing } from "./crypto";
import { type Db, openDb } from "./db/client";
import { migrate } from "./db/migrate";
import { type Env, readEnv } from "./env";
import { EventBus } from "./events";
import { Jobs } from "./jobs";
import { loadKeyRing } from "./keys";
import { logEvent, logFailure } from "./log";
import { countSealed } from "./metrics";
import { RunAdmission } from "./run-admission";
import { readSettings } from "./services/settings";
import { startTelemetry, type Telemetry } from "./telemetry";

export interface Platform {
  env: Env;
  db: Db;
  keys: KeyRing;
  apps: AppRegistry;
  /** OAuth sign-ins of http connections (tokens encrypted, never handed out). */
  oauth: ConnectionOAuth;
  runner: SandboxSupervisor;
  /** Caps server-side runs in total and per person; the rest queue (run-admission.ts). */
  admission: RunAdmission;
  /** This process among the instances on the database (recorded as the host of the runs it runs). */
  instanceId: string;
  /** The instances as one system: this one's lease, shared events, page presence (server/cluster.ts). */
  cluster: Cluster;
  /** Durable background jobs, taken by one instance at a time (server/jobs.ts). */
  jobs: Jobs;
  /** OpenTelemetry traces when OTEL_EXPORTER_OTLP_ENDPOINT is set, else a no-op (server/telemetry.ts). */
  telemetry: Telemetry;
  /**
   * Server-side runs this instance hosts (in progress or queued), by run id: aborting one cancels it.
   * A `run-cancel` event from any instance aborts it here.
   */
  activeRuns: Map<string, AbortController>;
  /** Turns in progress here, by turn id: aborting one stops the model; a `turn-stop` event does too. */
  activeTurns: Map<string, AbortController>;
  /** App calls in flight, by run id: when the run ends they are cancelled at the App (run-app-calls.ts). */
  runAppCalls: Map<string, Set<() => void>>;
  /** Calls being recorded, by run id: how many, and who waits for none (code-runs/recording.ts). */
  recordingCalls: Map<string, { count: number; idle: (() => void)[] }>;
  /**
   * True once `close` began: runs aborted then are handed over (left Running, taken over through replay
   * by another instance, or by this one's next start), not finished as Cancelled.
   */
  closing: boolean;
  /** A model to use instead of the configured one (tests: the AI SDK's mock models). */
  modelOverride?: import("ai").LanguageModel;
  /** Record changes for live views and domain events for upper layers (server/events.ts). */
  events: EventBus;
  /** Keeps background work (re-runs after a decision) observable; failures are logged. */
  track(work: Promise<unknown>): void;
  /** Resolves when all tracked background work has settled (tests, shutdown). */
  settled(): Promise<void>;
  /** Runs `work` every `intervalMs` (tracked) until the platform closes; the first run is now. */
  every(intervalMs: number, work: () => Promise<unknown>): void;
  seal(aad: string, plaintext: string): string;
  open(aad: string, value: string): string;
  close(): Promise<void>;
}

export interface CreatePlatformOptions {
  env?: Env;
  /** Keep PGlite in memory instead of under the data dir (tests). */
  inMemoryDb?: boolean;
}

export async function createPlatform(options: CreatePlatformOptions = {}): Promise<Platform> {
  const env = options.env ?? readEnv();
  const db = await openDb({
    url: env.DATABASE_URL,
    dataDir: options.inMemoryDb ? undefined : path.join(env.dataDir, "pglite"),
  });
  try {
    const applied = await migrate(db);
    if (applied.length) logEvent("migrated", { applied });
    const keys = loadKeyRing(env);
    const oauth = new ConnectionOAuth({ db, keys, publicOrigin: env.OPENBOT_PUBLIC_ORIGIN });
    const apps = await AppRegistry.start({
      db,
      dataDir: env.dataDir,
      callTimeoutMs: env.OPENBOT_APP_CALL_TIMEOUT_MS,
      oauth,
      box: { seal: (aad, plaintext) => encrypt(keys, plaintext, aad), open: (aad, value) => decrypt(keys, value, aad) },
    });
    // Admission (run-admission.ts) is the cap that follows the settings; the pool only bounds it from
    // above at the setting's maximum. Two warm workers let back-to-back runs alternate between ready contexts.
    // A person's runs at once share a worker up to OPENBOT_RUNS_PER_WORKER (supervisor.ts `runsPerWorker`),
    // once as many workers are busy as the machine has cores.
    const runner = new SandboxSupervisor({
      spawn: spawnNodeWorker,
      maxWorkers: CODE_MODE_RANGES.maxServerRuns.max,
      warmWorkers: 2,
      runsPerWorker: env.OPENBOT_RUNS_PER_WORKER,
      packAfter: availableParallelism(),
    });
    const activeRuns = new Map<string, AbortController>();
    const activeTurns = new Map<string, AbortController>();
    const events = new EventBus();
    const background = new Set<Promise<unknown>>();
    const instanceId = `inst_${randomUUID()}`;
    const cluster = await joinCluster(db, events, instanceId);
    events.on("run-cancel", ({ runId }) => activeRuns.get(runId)?.abort());
    events.on("turn-stop", ({ turnId }) => activeTurns.get(turnId)?.abort());
    events.on("connection-changed", ({ connectionId }) => platform.track(apps.reload(connectionId)));
    // Caps raised on any instance admit this instance's queued runs at once (not at its next request).
    events.on("settings-changed", () =>
      platform.track(readSettings(db).then((s) => platform.admission.apply(s.codeMode))),
    );
    const timers = new Set<ReturnType<typeof setInterval>>();
    const platform: Platform = {
      env,
      db,
      keys,
      apps,
      oauth,
      runner,
      admission: new RunAdmission(DEFAULT_CODE_MODE),
      instanceId,
      cluster,
      jobs: new Jobs({ db, instanceId, track: (work) => platform.track(work) }),
      telemetry: startTelemetry(),
      activeRuns,
      activeTurns,
      runAppCalls: new Map(),
      recordingCalls: new Map(),
      closing: false,
      events,
      track(work) {
        const tracked = work
          .catch((error: unknown) => logFailure("background_failed", error))
          .finally(() => background.delete(tracked));
        background.add(tracked);
      },
      async settled() {
        while (background.size) await Promise.allSettled([...background]);
      },
      seal: (aad, plaintext) => {
        countSealed("seal");
        return encrypt(keys, plaintext, aad);
      },
      open: (aad, value) => {
        countSealed("open");
        return decrypt(keys, value, aad);
      },
      every(intervalMs, work) {
        const tick = () => platform.track(work());
        tick();
        const timer = setInterval(tick, intervalMs);
        timer.unref();
        timers.add(timer);
      },
      async close() {
        platform.closing = true;
        for (const timer of timers) clearInterval(timer);
        platform.jobs.close();
        for (const c of activeRuns.values()) c.abort();
        for (const c of activeTurns.values()) c.abort();
        // Aborted server runs still answer their callers from the database (the run is left for a takeover):
        // give them a moment to do so before the database closes.
        for (let waited = 0; activeRuns.size > 0 && waited < 5_000; waited += 20)
          await new Promise((resolve) => setTimeout(resolve, 20));
        await Promise.allSettled([...background]);
        await cluster.close();
        await platform.telemetry.close();
        runner.dispose();
        await apps.close();
        await db.close();
      },
    };
    return platform;
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
}

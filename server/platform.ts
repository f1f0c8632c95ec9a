/**
 * The process-wide parts of the server: database, key ring, App registry and the sandbox runner. Made
 * once per process and kept on globalThis, because Next loads instrumentation, route handlers and pages
 * as separate module instances. Tests make their own with `createPlatform`.
 */
import { EventEmitter } from "node:events";
import path from "node:path";
import { SandboxSupervisor } from "@/worker/supervisor";
import { spawnNodeWorker } from "@/worker/node-port";
import { AppRegistry } from "./apps/registry";
import { decrypt, encrypt, type KeyRing } from "./crypto";
import { type Db, openDb } from "./db/client";
import { migrate } from "./db/migrate";
import { type Env, readEnv } from "./env";
import { loadKeyRing } from "./keys";
import { logEvent, logFailure } from "./log";
import { bootstrapAdmin } from "./services/auth";
import { RunAdmission } from "./services/run-admission";
import { readSettings } from "./services/settings";

export interface Platform {
  env: Env;
  db: Db;
  keys: KeyRing;
  apps: AppRegistry;
  runner: SandboxSupervisor;
  /** Caps server-side runs in total and per person; the rest queue (services/run-admission.ts). */
  admission: RunAdmission;
  /** Server-side runs in progress or queued, by run id: aborting one cancels it. */
  activeRuns: Map<string, AbortController>;
  /** Turns in progress, by turn id: aborting one stops the model and its programs. */
  activeTurns: Map<string, AbortController>;
  /** Pages subscribed to a chat's turns, by chat id: a program of that chat can run in a page's worker. */
  pageListeners: Map<string, number>;
  /** A model to use instead of the configured one (tests: the AI SDK's mock models). */
  modelOverride?: import("ai").LanguageModel;
  /** Record changes (`run` events with runId/chatId) for live views. */
  events: EventEmitter;
  /** Keeps background work (re-runs after a decision) observable; failures are logged. */
  track(work: Promise<unknown>): void;
  /** Resolves when all tracked background work has settled (tests, shutdown). */
  settled(): Promise<void>;
  /** Starts the periodic sweep that finishes what dead hosts left behind (the server does; tests call sweepRuns). */
  startSweeper(intervalMs?: number): void;
  seal(aad: string, plaintext: string): string;
  open(aad: string, value: string): string;
  close(): Promise<void>;
}

export interface CreatePlatformOptions {
  env?: Env;
  /** Keep PGlite in memory instead of under the data dir (tests). */
  inMemoryDb?: boolean;
  /** Print the first admin token (the server does; tests read it from the return value). */
  announce?: (token: string, file: string) => void;
}

export async function createPlatform(options: CreatePlatformOptions = {}): Promise<Platform & { createdAdminToken?: string }> {
  const env = options.env ?? readEnv();
  const db = await openDb({
    url: env.DATABASE_URL,
    dataDir: options.inMemoryDb ? undefined : path.join(env.dataDir, "pglite"),
  });
  try {
    const applied = await migrate(db);
    if (applied.length) logEvent("migrated", { applied });
    const initial = await readSettings(db);
    const keys = loadKeyRing(env);
    const { createdToken } = await bootstrapAdmin(db, env.dataDir, env.OPENBOT_ADMIN_TOKEN);
    if (createdToken) options.announce?.(createdToken, path.join(env.dataDir, "admin-token"));
    const apps = await AppRegistry.start({ db, dataDir: env.dataDir });
    const runner = new SandboxSupervisor({ spawn: spawnNodeWorker });
    const activeRuns = new Map<string, AbortController>();
    const activeTurns = new Map<string, AbortController>();
    const pageListeners = new Map<string, number>();
    const events = new EventEmitter();
    events.setMaxListeners(0);
    const background = new Set<Promise<unknown>>();
    let sweeper: ReturnType<typeof setInterval> | undefined;
    const platform: Platform & { createdAdminToken?: string } = {
      env,
      db,
      keys,
      apps,
      runner,
      admission: new RunAdmission(initial.codeMode),
      activeRuns,
      activeTurns,
      pageListeners,
      events,
      track(work) {
        const tracked = work.catch((error: unknown) => logFailure("background_failed", error)).finally(() => background.delete(tracked));
        background.add(tracked);
      },
      async settled() {
        while (background.size) await Promise.allSettled([...background]);
      },
      createdAdminToken: createdToken,
      seal: (aad, plaintext) => encrypt(keys, plaintext, aad),
      open: (aad, value) => decrypt(keys, value, aad),
      startSweeper(intervalMs = 15_000) {
        const sweep = () => platform.track(import("./services/code-runs").then(({ sweepRuns }) => sweepRuns(platform)));
        sweep();
        sweeper = setInterval(sweep, intervalMs);
        sweeper.unref();
      },
      async close() {
        if (sweeper) clearInterval(sweeper);
        for (const c of activeRuns.values()) c.abort();
        for (const c of activeTurns.values()) c.abort();
        await Promise.allSettled([...background]);
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

const GLOBAL_KEY = Symbol.for("openbot.platform");
type GlobalWithPlatform = typeof globalThis & { [GLOBAL_KEY]?: Promise<Platform> };

/** The process's platform, created on first use. */
export function getPlatform(): Promise<Platform> {
  const g = globalThis as GlobalWithPlatform;
  g[GLOBAL_KEY] ??= createPlatform({
    announce: (token, file) => {
      process.stdout.write(
        `\nOpenBot created an admin token (shown once; also saved to ${file} with mode 0600):\n\n  ${token}\n\nSign in with it at the web page.\n\n`,
      );
    },
  })
    .then((platform) => {
      platform.startSweeper();
      return platform;
    })
    .catch((error: unknown) => {
    delete g[GLOBAL_KEY];
    throw error;
  });
  return g[GLOBAL_KEY];
}

/** Closes the process's platform if one was made. */
export async function closePlatform(): Promise<void> {
  const g = globalThis as GlobalWithPlatform;
  const pending = g[GLOBAL_KEY];
  delete g[GLOBAL_KEY];
  if (pending) await (await pending).close();
}

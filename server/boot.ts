/**
 * The composition root: makes the platform (infrastructure), then wires the services onto it — the first
 * admin token, the settings row, the agent's subscriptions to domain events, the sweep. The server keeps
 * one booted platform per process on globalThis (Next loads instrumentation, route handlers and pages as
 * separate module instances); tests boot their own.
 */
import "server-only";
import path from "node:path";
import { type CreatePlatformOptions, createPlatform, type Platform } from "./platform";
import { reportRunIfLate, subscribeAgent } from "./services/agent/late-results";
import { bootstrapAdmin } from "./services/auth";
import { settleParkedCall } from "./services/code-runs/parked";
import { resumeRun } from "./services/code-runs/runs";
import { sweepRuns } from "./services/code-runs/sweep";
import { CANCEL_TASK, cancelRunTasks, cancelTask, POLL_TASK, pollTask } from "./services/code-runs/tasks";
import { traceRunEnds } from "./services/run-trace";
import { readSettings } from "./services/settings";

export interface BootOptions extends CreatePlatformOptions {
  /** Print the first admin token (the server does; tests read `createdAdminToken`). */
  announce?: (token: string, file: string) => void;
  /** Sweep interval for runs whose host went away; 0 turns the sweeper off (tests call sweepRuns). Default 0. */
  sweepIntervalMs?: number;
  /** How often this instance looks for due jobs besides being woken (server/jobs.ts). Default 1000. */
  jobPollMs?: number;
}

export async function bootPlatform(options: BootOptions = {}): Promise<Platform & { createdAdminToken?: string }> {
  const platform = await createPlatform(options);
  try {
    await readSettings(platform.db);
    const { env } = platform;
    const { createdToken } = await bootstrapAdmin(platform.db, env.dataDir, env.OPENBOT_ADMIN_TOKEN);
    if (createdToken) options.announce?.(createdToken, path.join(env.dataDir, "admin-token"));
    subscribeAgent(platform);
    traceRunEnds(platform);
    // Work owed after an event is a durable job: taken by one instance, taken again if that one dies.
    const { jobs } = platform;
    jobs.handle("resume-run", (p) => resumeRun(platform, (p as { runId: string }).runId));
    jobs.handle("report-late", (p) => reportRunIfLate(platform, (p as { runId: string }).runId));
    // MCP Tasks: a parked call's task is polled, and cancelled at its App when the run ends first.
    jobs.handle(POLL_TASK, (p) => pollTask(platform, p as Parameters<typeof pollTask>[1]));
    jobs.handle(CANCEL_TASK, (p) => cancelTask(platform, p as { operationId: string }));
    const enqueue = (kind: string, runId: string, key: string) =>
      platform.track(jobs.enqueue(kind, { runId }, { key }));
    platform.events.on("decision-decided", ({ runId, decisionId }) =>
      enqueue("resume-run", runId, `resume-run:${decisionId}`),
    );
    platform.events.on("input-answered", ({ runId, key }) => enqueue("resume-run", runId, key));
    platform.events.on("app-input-result", ({ operationId, outcome }) =>
      platform.track(settleParkedCall({ platform, principal: null }, operationId, outcome)),
    );
    // An attempt ended waiting after its decisions were already taken: run it again (no key: each wait is new).
    platform.events.on("run-waiting", ({ runId }) => platform.track(jobs.enqueue("resume-run", { runId })));
    platform.events.on("run-settled", ({ runId, turnId, openTasks }) => {
      // Only a run of a turn is ever reported late (reportRunIfLate): an API run's end needs no job.
      if (turnId !== null) enqueue("report-late", runId, `report-late:${runId}`);
      if (openTasks !== false) platform.track(cancelRunTasks(platform, runId));
    });
    if (options.sweepIntervalMs) await jobs.every("sweep", options.sweepIntervalMs, () => sweepRuns(platform));
    await jobs.start(options.jobPollMs ?? 1_000);
    return Object.assign(platform, { createdAdminToken: createdToken });
  } catch (error) {
    await platform.close().catch(() => undefined);
    throw error;
  }
}

const GLOBAL_KEY = Symbol.for("openbot.platform");
type GlobalWithPlatform = typeof globalThis & { [GLOBAL_KEY]?: Promise<Platform> };

/** The process's platform, booted on first use. */
export function getPlatform(): Promise<Platform> {
  const g = globalThis as GlobalWithPlatform;
  g[GLOBAL_KEY] ??= bootPlatform({
    sweepIntervalMs: 5_000,
    announce: (token, file) => {
      process.stdout.write(
        `\nOpenBot created an admin token (shown once; also saved to ${file} with mode 0600):\n\n  ${token}\n\nSign in with it at the web page.\n\n`,
      );
    },
  }).catch((error: unknown) => {
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

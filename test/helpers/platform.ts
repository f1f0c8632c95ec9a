/**
 * A real platform for service tests: PGlite (on disk in a temp data dir, or in memory), the built-in MCP
 * apps over their real transport, and the Node worker-thread runner. Procedures are called through
 * tRPC's createCaller, with no HTTP.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Permission } from "@/contracts/permissions";
import { appRouter } from "@/server/api/root";
import { createContextInner } from "@/server/api/trpc";
import { bootPlatform } from "@/server/boot";
import { readEnv } from "@/server/env";
import type { Platform } from "@/server/platform";
import { type Principal, principalFromToken } from "@/server/services/auth";

export const ADMIN_TOKEN = "obk_test-admin-token-0123456789";

export interface TestPlatform {
  platform: Platform;
  dataDir: string;
  caller(principal: Principal | null): ReturnType<typeof appRouter.createCaller>;
  admin: Principal;
  close(): Promise<void>;
}

/** `codeMode`: turn Code Mode on first (most tests need it). */
export async function startTestPlatform(
  options: { inMemoryDb?: boolean; env?: Record<string, string>; codeMode?: boolean } = {},
): Promise<TestPlatform> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "openbot-test-"));
  const env = readEnv({ OPENBOT_DATA_DIR: dataDir, OPENBOT_ADMIN_TOKEN: ADMIN_TOKEN, ...options.env });
  const platform = await bootPlatform({ env, inMemoryDb: options.inMemoryDb ?? true });
  const admin = (await principalFromToken(platform.db, ADMIN_TOKEN))!;
  if (options.codeMode) {
    const caller = appRouter.createCaller(createContextInner(platform, admin));
    const s = await caller.settings.get();
    await caller.settings.update({ expectedVersion: s.version, codeMode: { enabled: true } });
  }
  return {
    platform,
    dataDir,
    admin,
    caller: (principal) => appRouter.createCaller(createContextInner(platform, principal)),
    async close() {
      await platform.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

let people = 0;

/** Makes a person with a key of the given permissions and returns their principal. */
export async function makePerson(
  t: TestPlatform,
  role: "admin" | "member",
  permissions: Permission[] = ["apps.use", "sessions.read", "sessions.write"],
): Promise<Principal> {
  const caller = t.caller(t.admin);
  // Names of people who belong are unique (people.ts addUser).
  const { id } = await caller.users.create({ name: `${role} person ${++people}`, role });
  const { token } = await caller.apiKeys.create({ userId: id, name: "test", permissions });
  return (await principalFromToken(t.platform.db, token))!;
}

export { CALENDAR_PROGRAM } from "@/contracts/example-programs.mjs";

/**
 * A run its page hosts, with its first call (a calendar read) made, so that attempt's host check is
 * remembered (code-runs/rows.ts runForCall).
 */
export async function pageRunWithOneCall(caller: ReturnType<TestPlatform["caller"]>, title: string) {
  const chat = await caller.chats.create({ title });
  const { ticket } = await caller.codeRuns.start({ chatId: chat.id, code: "return 1" });
  if (!ticket) throw new Error("the run was not handed to the page");
  const { runId, attempt } = ticket;
  const call = { runId, attempt, index: 0, binding: "work_calendar.list_events", argsJson: '{"day":"2026-10-23"}' };
  const answer = await caller.codeRuns.appCall(call);
  if (answer.type !== "ok") throw new Error(`the first call answered ${JSON.stringify(answer)}`);
  return { runId, attempt, call };
}

/**
 * The statements of the platform's own timers, which fall into a measured window at random (more of them the
 * slower the machine): the lease heartbeat and its tidying (cluster.ts), the job poll (jobs.ts), the health
 * probe (health.ts). Told apart by text: a run's calls arrive from its sandbox worker's messages, whose async
 * context is not the caller's, so the context cannot tell them apart.
 */
const BACKGROUND = [
  /^insert into instances \(id, pid, started_at, lease_until\) values \(\$1, \$2, \$3, \$4\)\s+on conflict/,
  /^delete from instances where lease_until < \$1$/,
  /^delete from page_presence p where not exists \(select 1 from instances i where i\.id = p\.instance_id\)$/,
  /^update jobs set locked_by = \$1, attempts = attempts \+ 1 where id in \(/,
  /^select 1$/,
];
export const isBackgroundStatement = (sql: string): boolean => BACKGROUND.some((p) => p.test(sql.trim()));

/** The statements `fn` sends through `db`, with their parameters, in order, without the platform's timers'. */
export async function statementsSent(
  db: Platform["db"],
  fn: () => Promise<unknown>,
): Promise<{ sql: string; params: unknown[] }[]> {
  const original = db.query.bind(db);
  const seen: { sql: string; params: unknown[] }[] = [];
  db.query = ((sql: string, params: unknown[] = []) => {
    if (!isBackgroundStatement(sql)) seen.push({ sql, params });
    return original(sql, params);
  }) as typeof db.query;
  try {
    await fn();
  } finally {
    db.query = original;
  }
  return seen;
}

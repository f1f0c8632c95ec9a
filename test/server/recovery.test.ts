/**
 * Runs outlive their hosts and upgrades: a run whose browser went away is finished by the server runner
 * through replay (never Running forever); after an upgrade old runs keep their ids, results and App
 * operation references and stay readable, and a waiting run whose stored step is gone ends Interrupted.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { appRouter } from "@/server/api/root";
import { createContextInner } from "@/server/api/trpc";
import { bootPlatform } from "@/server/boot";
import { encrypt } from "@/server/crypto";
import { openDb } from "@/server/db/client";
import { migrate } from "@/server/db/migrate";
import { MIGRATIONS } from "@/server/db/migrations";
import { readEnv } from "@/server/env";
import { loadKeyRing } from "@/server/keys";
import { principalFromToken } from "@/server/services/auth";
import { sweepRuns } from "@/server/services/code-runs/sweep";
import { ADMIN_TOKEN, CALENDAR_PROGRAM, startTestPlatform } from "../helpers/platform";

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

describe("recovery", () => {
  it("a run whose browser went away mid-run is finished by the server runner through replay", async () => {
    const t = await startTestPlatform();
    cleanup.push(() => t.close());
    const caller = t.caller(t.admin);
    const s = await caller.settings.get();
    await caller.settings.update({ expectedVersion: s.version, codeMode: { enabled: true } });
    const chat = await caller.chats.create({});
    // The page starts the run and makes its first call, then the tab closes.
    const { ticket } = await caller.codeRuns.start({ chatId: chat.id, code: CALENDAR_PROGRAM });
    await caller.codeRuns.appCall({
      runId: ticket!.runId,
      attempt: 1,
      index: 0,
      binding: "work_calendar.list_events",
      argsJson: '{"day":"2026-10-23"}',
    });
    const opsBefore = await t.platform.db.query("select id from app_operations where run_id = $1", [ticket!.runId]);
    expect(opsBefore).toHaveLength(1);

    expect((await sweepRuns(t.platform)).resumed).toEqual([]);
    await t.platform.db.query("update code_runs set updated_at = $2 where id = $1", [
      ticket!.runId,
      Date.now() - 5 * 60_000,
    ]);
    const swept = await sweepRuns(t.platform);
    expect(swept.resumed).toEqual([ticket!.runId]);
    await t.platform.settled();

    const done = await caller.codeRuns.byId({ id: ticket!.runId });
    expect(done.status).toBe("Completed");
    expect(done.calls).toHaveLength(2);
    // The first call was replayed from the record, not sent again.
    expect(await t.platform.db.query("select id from app_operations where run_id = $1", [ticket!.runId])).toHaveLength(
      2,
    );
    // The page that went away cannot write to the run any more.
    const stale = await caller.codeRuns
      .finish({
        runId: ticket!.runId,
        attempt: 1,
        outcome: { status: "completed", valueJson: "1", logs: [], output: [] },
      })
      .catch((e: Error) => e);
    expect((stale as Error).message).toContain("attempt");
  });

  it("after an upgrade old runs stay readable with their ids and results; an orphaned wait ends Interrupted", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "openbot-upgrade-"));
    cleanup.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const env = readEnv({ OPENBOT_DATA_DIR: dataDir, OPENBOT_ADMIN_TOKEN: ADMIN_TOKEN });
    const keys = loadKeyRing(env);
    // An installation of the first release: only the first two migrations, one finished run, one waiting run.
    const old = await openDb({ dataDir: path.join(dataDir, "pglite") });
    await migrate(old, MIGRATIONS.slice(0, 2));
    const seal = (aad: string, v: unknown) => encrypt(keys, JSON.stringify(v), aad);
    await old.query("insert into users (id, name, role, created_at) values ('usr_old', 'Old admin', 'admin', 1)");
    await old.query(
      "insert into chats (id, owner_id, title, created_at, updated_at) values ('chat_old', 'usr_old', 'Old', 1, 1)",
    );
    for (const [id, status, result] of [
      ["run_old_done", "Completed", { _tag: "Completed", value: ["kept"], logs: [], output: [] }],
      ["run_old_wait", "Waiting", null],
    ] as const) {
      await old.query(
        `insert into code_runs (id, execution_id, chat_id, created_by, status, language, code_enc, reason_enc, run_time, seed, limits, bindings, host, result_enc, created_at, updated_at)
         values ($1, $2, 'chat_old', 'usr_old', $3, 'javascript', $4, $5, 1, 1, '{"timeoutMs":10000,"memoryMb":64,"outputBytes":65536,"maxPendingCalls":16}', '[]', 'server', $6, 1, 1)`,
        [
          id,
          `exe_${id}`,
          status,
          seal(`code_runs:${id}:code`, "return 1"),
          seal(`code_runs:${id}:reason`, "old"),
          result ? seal(`code_runs:${id}:result`, result) : null,
        ],
      );
    }
    await old.query(
      `insert into app_operations (id, execution_id, chat_id, run_id, call_index, connection_id, tool, status, args_enc, result_enc, started_at, finished_at)
       values ('op_old', 'exe_op_old', 'chat_old', 'run_old_done', 0, 'conn_work_calendar', 'list-events', 'Completed', $1, $2, 1, 2)`,
      [
        seal("app_operations:op_old:args", "{}"),
        seal("app_operations:op_old:result", { structuredContent: { events: [] } }),
      ],
    );
    await old.query(
      `insert into code_run_calls (run_id, idx, binding, source, args_enc, args_digest, operation_id, outcome_enc, completed_seq, created_at)
       values ('run_old_done', 0, 'work_calendar.list_events', '{"connectionId":"conn_work_calendar","connectionName":"Work calendar","name":"list-events"}', $1, 'd', 'op_old', $2, 1, 1)`,
      [
        seal("code_run_calls:run_old_done:0:args", "{}"),
        seal("code_run_calls:run_old_done:0:outcome", { type: "ok", resultJson: "{}" }),
      ],
    );
    await old.close();

    // The upgrade: the new release starts on the same data dir.
    const platform = await bootPlatform({ env });
    cleanup.push(() => platform.close());
    const admin = (await principalFromToken(platform.db, ADMIN_TOKEN))!;
    const caller = appRouter.createCaller(createContextInner(platform, admin));
    const done = await caller.codeRuns.byId({ id: "run_old_done" });
    expect(done).toMatchObject({
      id: "run_old_done",
      executionId: "exe_run_old_done",
      status: "Completed",
      result: { _tag: "Completed", value: ["kept"] },
    });
    expect(done.calls[0]).toMatchObject({
      binding: "work_calendar.list_events",
      app: { id: "op_old", status: "Completed", result: { structuredContent: { events: [] } } },
    });
    expect((await caller.codeRuns.byId({ id: "run_old_wait" })).status).toBe("Waiting");
    const swept = await sweepRuns(platform);
    expect(swept.interrupted).toContain("run_old_wait");
    expect((await caller.codeRuns.byId({ id: "run_old_wait" })).result).toMatchObject({
      _tag: "Failed",
      reason: "Interrupted",
    });
    expect((await caller.codeRuns.byId({ id: "run_old_done" })).status).toBe("Completed");
  });
});

/** What a dead host left behind, finished on start and then periodically (boot.ts runs it). */
import "server-only";
import { PAGE_HOST_LEASE_MS } from "@/contracts/code-run";
import type { Platform } from "../../platform";
import { failRun } from "./endings";
import { expireParkedInputs } from "./parked";
import type { RunRow } from "./rows";
import { resumeRun } from "./runs";

/** How long an App operation may stay Running past every call timeout (and a question past its deadline). */
const STALE_GRACE_MS = 60_000;
/** How long a server run of this instance may be missing from its active runs before the sweep takes it over. */
const OWN_GRACE_MS = 10_000;

/**
 * Finishes what a dead host left behind, on start and then periodically. An App operation still
 * "Running" long past every call timeout was sent but never recorded: it becomes Unknown and is not
 * sent again. A server-hosted run whose instance's lease expired (cluster.ts), or a page-hosted run whose
 * tab went silent, is continued by the server runner through replay (the attempt guard lets one
 * instance win; an Unknown write then waits for a person, unknown.ts). A waiting run whose decision is
 * gone ends as Interrupted; one waiting for a person's input is left to wait (or to its question's
 * deadline, which ends the call as AppInputRequired), one parked on an App's task waits for its poll job
 * (code-runs/tasks.ts). Reading a
 * run never does any of this.
 */
export async function sweepRuns(
  platform: Platform,
  now = Date.now(),
): Promise<{ resumed: string[]; interrupted: string[] }> {
  const { db } = platform;
  await db.query("update app_operations set status = 'Unknown' where status = 'Running' and started_at < $1", [
    now - STALE_GRACE_MS - 60_000,
  ]);
  // A question past its deadline ends: the program's call gets AppInputRequired and its run goes on.
  // (A task's question lives with the task at its App, which keeps it as long as the task lives.)
  await expireParkedInputs(platform, now);
  await db.query(
    `update app_operations set status = 'Failed', error_reason = 'input_expired', finished_at = $2
     where status = 'InputRequired' and input_expires_at is null and task_enc is null and started_at < $1`,
    [now - 10 * 60_000 - STALE_GRACE_MS, now],
  );
  const resumed: string[] = [];
  const interrupted: string[] = [];
  // A server-hosted run whose instance's lease ended (that process died): its calls in flight will never
  // be recorded by it, so they become Unknown now (never sent again blindly) and the run is taken over.
  // So is a run this instance hosts but no longer runs: its attempt ended while the database was away (a
  // Postgres restart), so the ending could not be stored. The grace covers a run just made, not yet started.
  const orphaned = await db.query<RunRow>(
    `select * from code_runs r where r.status in ('Running', 'Queued') and r.host = 'server'
     and (not exists (select 1 from instances i where i.id = r.host_instance and i.lease_until > $1)
          or (r.host_instance = $2 and r.updated_at < $3))`,
    [now, platform.instanceId, now - OWN_GRACE_MS],
  );
  for (const run of orphaned) {
    if (platform.activeRuns.has(run.id)) continue;
    await db.query("update app_operations set status = 'Unknown' where run_id = $1 and status = 'Running'", [run.id]);
    resumed.push(run.id);
    platform.track(resumeRun(platform, run.id, { status: "Running", attempt: run.attempt }));
  }
  // A page-hosted run whose page's lease ended: the page renews it while its program runs (hostAlive),
  // so a closed or reloaded tab is noticed within PAGE_HOST_LEASE_MS, however long the program's limits.
  const stale = await db.query<RunRow>(
    `select * from code_runs r where r.status in ('Running', 'Queued') and r.host <> 'server' and r.updated_at < $1
     and not exists (select 1 from app_operations o where o.run_id = r.id and o.status = 'Running')`,
    [now - PAGE_HOST_LEASE_MS],
  );
  for (const run of stale) {
    if (platform.activeRuns.has(run.id)) continue;
    resumed.push(run.id);
    platform.track(resumeRun(platform, run.id, { status: "Running", attempt: run.attempt }));
  }
  const orphans = await db.query<{ id: string }>(
    `select r.id from code_runs r where r.status = 'Waiting'
     and not exists (select 1 from decisions d where d.run_id = r.id and d.status in ('pending', 'allowed', 'denied'))
     and not exists (select 1 from code_run_calls c where c.run_id = r.id and c.unknown_state in ('pending', 'send', 'done'))
     and not exists (select 1 from app_operations o where o.run_id = r.id and (o.input_enc is not null or o.status = 'Task'))`,
  );
  for (const { id } of orphans) {
    interrupted.push(id);
    await failRun({ platform, principal: null }, id, "Interrupted", "The run waited for a step that is gone.", []);
  }
  // Decided, but the re-run never started (the process stopped between the answer and the re-run).
  const decided = await db.query<{ id: string }>(
    `select r.id from code_runs r where r.status = 'Waiting' and r.updated_at < $1
     and not exists (select 1 from decisions d where d.run_id = r.id and d.status = 'pending')
     and not exists (select 1 from code_run_calls c where c.run_id = r.id and c.unknown_state = 'pending')
     and not exists (select 1 from app_operations o where o.run_id = r.id and o.status in ('InputRequired', 'Task'))`,
    [now - STALE_GRACE_MS],
  );
  for (const { id } of decided) {
    if (interrupted.includes(id)) continue;
    resumed.push(id);
    platform.track(resumeRun(platform, id));
  }
  return { resumed, interrupted };
}

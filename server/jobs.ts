/**
 * Durable background jobs in the database (re-runs after a decision, the sweep, posting late results):
 * taken with `FOR UPDATE SKIP LOCKED` by one instance at a time, held while that instance's lease
 * (server/cluster.ts) holds, taken again by another instance when the taker dies, retried with backoff.
 *
 * Why not pg-boss or graphile-worker: both want a `pg` pool (graphile-worker also a LISTEN connection
 * and its own schema of functions); pg-boss runs on PGlite only through a hand-written adapter that
 * inlines parameters (pg-boss issue #563). The embedded mode must keep working with the same semantics,
 * so one small table serves both engines, with the library's rules: skip-locked take, lease-bound
 * locks, backoff, dedupe keys, recurring jobs.
 */
import "server-only";
import { randomUUID } from "node:crypto";
import type { Db } from "./db/client";
import { logEvent, logFailure } from "./log";

export type JobHandler = (payload: unknown) => Promise<void>;

interface JobRow {
  id: string;
  kind: string;
  payload: string;
  attempts: number;
  dedupe_key: string | null;
}

const MAX_ATTEMPTS = 8;
const WAKE_CHANNEL = "openbot_jobs";

export interface JobsOptions {
  db: Db;
  instanceId: string;
  /** Runs work in the background, observably (platform.track). */
  track: (work: Promise<unknown>) => void;
  /** How many jobs this instance runs at once. Default 32. */
  concurrency?: number;
}

export class Jobs {
  private readonly handlers = new Map<string, JobHandler>();
  private readonly recurring = new Map<string, number>();
  private running = 0;
  private draining = false;
  private again = false;
  private timer: ReturnType<typeof setInterval> | null = null;
  private closed = false;

  constructor(private readonly options: JobsOptions) {}

  /** Registers the handler of `kind`; a job of a kind no instance handles waits. */
  handle(kind: string, handler: JobHandler): void {
    this.handlers.set(kind, handler);
  }

  /**
   * Adds a job (due after `delayMs`). With `key`, a job with that key not yet finished is kept and this one
   * dropped. Returns whether it was added.
   */
  async enqueue(kind: string, payload: unknown, options: { key?: string; delayMs?: number } = {}): Promise<boolean> {
    const now = Date.now();
    const rows = await this.options.db.query(
      `insert into jobs (id, kind, dedupe_key, payload, run_at, created_at) values ($1, $2, $3, $4, $5, $6)
       on conflict (dedupe_key) do nothing returning id`,
      [
        `job_${randomUUID()}`,
        kind,
        options.key ?? null,
        JSON.stringify(payload ?? null),
        now + (options.delayMs ?? 0),
        now,
      ],
    );
    if (rows.length && !options.delayMs) {
      await this.options.db.notify(WAKE_CHANNEL, "").catch(() => undefined);
      this.wake();
    }
    return rows.length > 0;
  }

  /** A job of `kind` every `intervalMs` across all instances (one row, taken by one instance at a time). */
  async every(kind: string, intervalMs: number, handler: () => Promise<unknown>): Promise<void> {
    this.handle(kind, async () => {
      await handler();
    });
    this.recurring.set(kind, intervalMs);
    await this.enqueue(kind, null, { key: `every:${kind}` });
  }

  /** Polls for due jobs every `pollMs` and whenever another instance adds one. */
  async start(pollMs: number): Promise<void> {
    await this.options.db.listen(WAKE_CHANNEL, () => this.wake());
    this.timer = setInterval(() => this.wake(), pollMs);
    this.timer.unref();
    this.wake();
  }

  /** Takes and runs due jobs now (tracked, so `platform.settled()` waits for them). */
  wake(): void {
    if (this.closed) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = true;
    this.options.track(
      this.drain().finally(() => {
        this.draining = false;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      }),
    );
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
  }

  private async drain(): Promise<void> {
    const kinds = [...this.handlers.keys()];
    const room = (this.options.concurrency ?? 32) - this.running;
    if (!kinds.length || room <= 0) return;
    const now = Date.now();
    // A job is free when no one holds it or its holder's lease has ended (that instance died).
    const taken = await this.options.db.query<JobRow>(
      `update jobs set locked_by = $1, attempts = attempts + 1 where id in (
         select j.id from jobs j where j.run_at <= $2 and j.kind = any($3)
           and (j.locked_by is null or not exists (select 1 from instances i where i.id = j.locked_by and i.lease_until > $2))
         order by j.run_at limit $4 for update skip locked)
       returning id, kind, payload, attempts, dedupe_key`,
      [this.options.instanceId, now, kinds, room],
    );
    for (const job of taken) {
      this.running++;
      this.options.track(this.run(job).finally(() => this.running--));
    }
  }

  private async run(job: JobRow): Promise<void> {
    const { instanceId } = this.options;
    const handler = this.handlers.get(job.kind);
    let release: [string, unknown[]];
    try {
      if (!handler) throw new Error(`no handler for ${job.kind}`);
      await handler(JSON.parse(job.payload));
      const every = this.recurring.get(job.kind);
      release =
        every !== undefined
          ? [
              "update jobs set locked_by = null, attempts = 0, run_at = $3 where id = $1 and locked_by = $2",
              [job.id, instanceId, Date.now() + every],
            ]
          : ["delete from jobs where id = $1 and locked_by = $2", [job.id, instanceId]];
    } catch (error) {
      const errorId = logFailure("job_failed", error, { jobId: job.id, kind: job.kind, attempt: job.attempts });
      if (job.attempts >= MAX_ATTEMPTS && !this.recurring.has(job.kind)) {
        logEvent("job_given_up", { jobId: job.id, kind: job.kind, errorId });
        release = ["delete from jobs where id = $1 and locked_by = $2", [job.id, instanceId]];
      } else {
        // Backoff: 1 s, 2 s, 4 s … up to 5 minutes.
        const delay = Math.min(1_000 * 2 ** (job.attempts - 1), 300_000);
        release = [
          "update jobs set locked_by = null, run_at = $3, last_error = $4 where id = $1 and locked_by = $2",
          [job.id, instanceId, Date.now() + delay, errorId],
        ];
      }
    }
    await this.release(job, release);
  }

  /**
   * Stores how a job ended, trying again while the database is away (a Postgres restart): a job left
   * locked by this live instance would never be taken again, and a recurring one (the sweep) would stop.
   */
  private async release(job: JobRow, [sql, params]: [string, unknown[]]): Promise<void> {
    for (let wait = 250; ; wait = Math.min(wait * 2, 5_000)) {
      try {
        await this.options.db.query(sql, params);
        return;
      } catch (error) {
        if (this.closed) throw error;
        logFailure("job_release_failed", error, { jobId: job.id, kind: job.kind });
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }
}

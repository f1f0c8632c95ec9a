/**
 * Drives sandbox workers over contracts/worker-protocol.ts; used by the page (Web Workers) and the server
 * (worker threads) alike. Keeps a pool of at most `maxWorkers` workers (one run per worker at a time, or up
 * to `runsPerWorker` runs of one tenant packed onto one worker; runs beyond it wait in a queue here), warms each new worker with a throwaway run, hands a run to the
 * idle worker released second most recently (the last one is likely still preparing its next context,
 * and back-to-back runs alternate between two workers that stay warm), retires idle workers beyond
 * `maxIdle`, and watches every run: the worker reports its busy time (through a shared-memory meter where
 * SharedArrayBuffer exists, else busy/idle messages), and when the guest has been busy longer than
 * `timeoutMs + graceMs` in total (built-ins such as a huge-length `indexOf` never reach the interrupt
 * handler) the worker is terminated, the run fails `Timeout` and a fresh worker replaces it.
 * Cancel asks the worker first (with a meter, a flag its interrupt handler reads, so a run busy in guest code
 * stops at once and the worker lives on) and terminates it if it does not finish within the grace. A worker error,
 * or a worker whose "ready" reports that the engine could not load, fails its run `Unavailable` at once. Runtime-neutral; `run` never rejects.
 *
 * Over 400 lines on purpose: the pool (workers, queue, warm-up, retirement) and each run's watchdog share one
 * worker table; the worker's side is worker-host.ts.
 */
import type { CallRequest, EngineLimits, HostCallAnswer, LogLine, RunInput } from "../contracts/engine";
import { type CallAnswer, type FromWorker, isFromWorker, type ToWorker } from "../contracts/worker-protocol";
import { createMeter, meterBusyMs, meterCancel } from "./busy-meter";
import { readyError } from "./ready";
import type { EngineOutcome } from "./run-session";

/** A spawned sandbox worker, whatever its host. */
export interface WorkerPort {
  post(message: ToWorker): void;
  onMessage(listener: (message: unknown) => void): void;
  onError(listener: (error: unknown) => void): void;
  terminate(): void;
}

export interface SupervisorOptions {
  spawn(): WorkerPort;
  /** Busy time allowed beyond `timeoutMs` before the watchdog terminates the worker; also the cancel grace. Default 1000. */
  graceMs?: number;
  /** Workers alive at once (running, idle or starting); runs beyond wait in the supervisor's queue, in order. Default 8. */
  maxWorkers?: number;
  /** Idle workers kept indefinitely; idle workers beyond this are retired after `idleRetireMs`. Default 2. */
  maxIdle?: number;
  /** How long a surplus idle worker (beyond `maxIdle`) is kept for another run before it is retired. Default 10000. */
  idleRetireMs?: number;
  /**
   * Workers spawned and warmed when the supervisor is created, so the first runs do not pay for a worker
   * start (~100 ms each); kept at least this many alive after a crash. At most `maxWorkers`. Default 0.
   */
  warmWorkers?: number;
  /** Limits of the warm-up run of `warmWorkers` (its `memoryMb` picks the module each worker loads first). Default: 64 MiB, 1 s. */
  warmLimits?: EngineLimits;
  /**
   * Whether runs report busy time through a SharedArrayBuffer meter instead of busy/idle messages.
   * Default: true where SharedArrayBuffer exists. (False only to test the message path.)
   */
  sharedMeter?: boolean;
  /** Time a new worker has to answer "ready". Default 15000. */
  readyTimeoutMs?: number;
  /**
   * Runs of one tenant (`RunHandlers.tenant`) one worker may host at once; default 1. A run of a tenant
   * goes to a worker already busy with that tenant's runs while it has room, before an idle worker: the
   * answers a host finds together then wake one thread instead of several, which is most of an awaited
   * call's cost on a machine with few cores (worker/PROGRESS.md). Each run keeps its own module, limits and
   * watchdog; what co-tenants share is the thread: one's busy slice delays the others, and a worker the
   * watchdog terminates (or that crashes) fails all of them `Unavailable`. Hence one tenant only, and only
   * under load (`packAfter`).
   */
  runsPerWorker?: number;
  /**
   * Runs share a worker only while at least this many workers are busy (a server: its cores), so a run on a
   * machine with room never waits behind another's busy slice. Default 0: whenever `runsPerWorker` allows.
   */
  packAfter?: number;
}

export interface RunHandlers {
  /** Answers one call of the program; a rejection stops the run with `Unavailable`. */
  call(req: CallRequest): Promise<HostCallAnswer>;
  onLog?(line: LogLine): void;
  signal?: AbortSignal;
  /** Who the run is for (the server: the person); runs of one tenant may share a worker (`runsPerWorker`). */
  tenant?: string;
}

const WARM_UP_CODE = "const a = [1, 2, 3].map((x) => x * 2); console.log(a); return a.length;";
const DEFAULT_WARM_LIMITS: EngineLimits = { timeoutMs: 1000, memoryMb: 64, outputBytes: 65536, maxPendingCalls: 16 };
/** What a co-tenant's run hears when its worker is stopped for another run on it. */
const STOPPED_FOR_ANOTHER = "the sandbox worker was stopped for another program of the same person running on it";
let nonceCounter = 0;

function newNonce(): string {
  nonceCounter += 1;
  return `${Date.now().toString(36)}-${nonceCounter}-${Math.random().toString(36).slice(2, 10)}`;
}

function failed(
  reason: "Timeout" | "Cancelled" | "Unavailable",
  message: string,
  logs: LogLine[],
  order: number[],
): EngineOutcome {
  return { status: "failed", reason, message, logs, output: [], completionOrder: order };
}

/** One worker and the run it is doing. */
class PooledWorker {
  readonly ready: Promise<void>;
  dead = false;
  /** Runs in progress (or promised) on this worker, and the tenant they are for while there are any. */
  load = 0;
  tenant: string | undefined;
  private readonly listeners = new Map<string, (message: FromWorker) => void>();
  private readonly deaths = new Set<(why?: string) => void>();

  constructor(
    private readonly port: WorkerPort,
    readyTimeoutMs: number,
  ) {
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the sandbox worker did not start")), readyTimeoutMs);
      port.onMessage((message) => {
        if (!isFromWorker(message)) return;
        if (message.type === "ready") {
          clearTimeout(timer);
          const error = readyError(message);
          if (error === undefined) resolve();
          else reject(new Error(error));
        } else if ("nonce" in message) this.listeners.get(message.nonce)?.(message);
      });
      port.onError((error) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error("the sandbox worker failed"));
        this.kill();
      });
    });
    this.ready.catch(() => undefined);
  }

  /**
   * Terminates the worker; a run still in progress fails `Unavailable`, with `why` as its message when the
   * worker was stopped for another run on it (a co-tenant's, see `runsPerWorker`).
   */
  kill(why?: string): void {
    if (this.dead) return;
    this.dead = true;
    try {
      this.port.terminate();
    } catch {
      // Already gone.
    }
    for (const death of [...this.deaths]) death(why);
  }

  /** Runs one program on this worker; resolves with its outcome, never rejects. */
  async execute(input: RunInput, handlers: RunHandlers, graceMs: number, sharedMeter: boolean): Promise<EngineOutcome> {
    try {
      await this.ready;
    } catch (error) {
      this.kill();
      const detail = error instanceof Error && error.message ? `: ${error.message}` : "";
      return failed("Unavailable", `the sandbox worker could not start${detail}`, [], []);
    }
    if (this.dead) return failed("Unavailable", "the sandbox worker is gone", [], []);
    const nonce = newNonce();
    const logs: LogLine[] = [];
    const order: number[] = [];
    // Answers ready at the same moment go to the worker in one message.
    const answered: CallAnswer[] = [];
    const flushAnswers = (): void => {
      this.send({ type: "answers", nonce, answers: answered.splice(0) });
    };
    const queueAnswer = (item: CallAnswer): void => {
      if (answered.push(item) === 1) queueMicrotask(flushAnswers);
    };
    return new Promise<EngineOutcome>((resolve) => {
      let settled = false;
      let busySince: number | undefined;
      let busyTotal = 0;
      let watchdog: ReturnType<typeof setTimeout> | undefined;
      let cancelTimer: ReturnType<typeof setTimeout> | undefined;
      const finish = (outcome: EngineOutcome): void => {
        if (settled) return;
        settled = true;
        clearTimeout(watchdog);
        clearTimeout(cancelTimer);
        handlers.signal?.removeEventListener("abort", onAbort);
        this.listeners.delete(nonce);
        this.deaths.delete(onDeath);
        resolve(outcome);
      };
      const budget = input.limits.timeoutMs + graceMs;
      const timeOut = (): void => {
        finish(failed("Timeout", `the program ran longer than ${input.limits.timeoutMs} ms`, logs, order));
        this.kill(`${STOPPED_FOR_ANOTHER}: it ran past its time limit`);
      };
      const metered = sharedMeter ? createMeter() : undefined;
      // With a meter the watchdog wakes when the budget could first be spent and re-arms for what is left.
      const check = (): void => {
        if (settled || !metered) return;
        const busy = meterBusyMs(metered.view, metered.meter.base);
        if (busy >= budget) timeOut();
        else watchdog = setTimeout(check, Math.max(5, budget - busy));
      };
      const onAbort = (): void => {
        if (settled) return;
        // The flag reaches a worker busy in guest code (its interrupt handler reads it); the message one that waits.
        if (metered) meterCancel(metered.view);
        this.send({ type: "cancel", nonce });
        cancelTimer = setTimeout(() => {
          finish(failed("Cancelled", "the run was cancelled", logs, order));
          this.kill(`${STOPPED_FOR_ANOTHER}: it did not stop when cancelled`);
        }, graceMs);
      };
      const onDeath = (why?: string) => finish(failed("Unavailable", why ?? "the sandbox worker failed", logs, order));
      this.deaths.add(onDeath);
      this.listeners.set(nonce, (message) => {
        if (settled || !("nonce" in message) || message.nonce !== nonce) return;
        switch (message.type) {
          case "busy":
            if (metered) break;
            if (message.busy && busySince === undefined) {
              busySince = Date.now();
              watchdog = setTimeout(timeOut, Math.max(0, budget - busyTotal));
            } else if (!message.busy && busySince !== undefined) {
              busyTotal += Date.now() - busySince;
              busySince = undefined;
              clearTimeout(watchdog);
            }
            break;
          case "logs":
            if (!Array.isArray(message.lines)) break;
            for (const line of message.lines) {
              logs.push(line);
              try {
                handlers.onLog?.(line);
              } catch {
                // A failing listener must not affect the run.
              }
            }
            break;
          case "calls":
            if (!Array.isArray(message.calls)) break;
            for (const call of message.calls) this.answer(call, handlers, order, queueAnswer, () => settled);
            break;
          case "done":
            finish(message.outcome as EngineOutcome);
            break;
        }
      });
      if (handlers.signal?.aborted) {
        finish(failed("Cancelled", "the run was cancelled", [], []));
        return;
      }
      handlers.signal?.addEventListener("abort", onAbort, { once: true });
      if (metered) {
        this.send({ type: "run", nonce, input, meter: metered.meter });
        watchdog = setTimeout(check, budget);
      } else this.send({ type: "run", nonce, input });
    });
  }

  private answer(
    call: CallRequest,
    handlers: RunHandlers,
    order: number[],
    queueAnswer: (item: CallAnswer) => void,
    isSettled: () => boolean,
  ): void {
    let pending: Promise<HostCallAnswer>;
    try {
      pending = Promise.resolve(handlers.call(call));
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending
      .catch(
        (): HostCallAnswer => ({ type: "stop", reason: "Unavailable", message: "the host failed to answer a call" }),
      )
      .then((answer) => {
        if (isSettled()) return;
        if (answer.type === "ok" || answer.type === "error") order.push(call.index);
        queueAnswer({ index: call.index, answer });
      });
  }

  private send(message: ToWorker): void {
    if (this.dead) return;
    try {
      this.port.post(message);
    } catch {
      this.kill();
    }
  }
}

/** Promises one more run on `worker` to `tenant`. */
function claim(worker: PooledWorker, tenant: string | undefined): PooledWorker {
  worker.load += 1;
  worker.tenant = tenant;
  return worker;
}

interface Waiter {
  tenant: string | undefined;
  /** Hands the waiting run a worker (possibly one that failed to start: its run then fails at once), or undefined on dispose. */
  take(worker: PooledWorker | undefined): void;
}

export class SandboxSupervisor {
  /** Idle workers, in the order they were released (the one idle longest first). */
  private readonly idle: PooledWorker[] = [];
  private readonly all = new Set<PooledWorker>();
  private readonly queue: Waiter[] = [];
  private readonly graceMs: number;
  private readonly maxWorkers: number;
  private readonly maxIdle: number;
  private readonly idleRetireMs: number;
  private readonly warmWorkers: number;
  private readonly readyTimeoutMs: number;
  private readonly sharedMeter: boolean;
  private readonly runsPerWorker: number;
  private readonly packAfter: number;
  private retireTimer: ReturnType<typeof setTimeout> | undefined;
  /** Workers being warmed by `prewarm`/refill, not yet promised to a run: a run waits for one rather than spawn. */
  private warming = 0;
  private lastLimits: EngineLimits | undefined;
  private disposed = false;

  constructor(private readonly options: SupervisorOptions) {
    this.graceMs = options.graceMs ?? 1000;
    this.maxWorkers = Math.max(1, Math.floor(options.maxWorkers ?? 8));
    this.maxIdle = Math.max(0, Math.floor(options.maxIdle ?? 2));
    this.idleRetireMs = options.idleRetireMs ?? 10_000;
    this.warmWorkers = Math.min(this.maxWorkers, Math.max(0, Math.floor(options.warmWorkers ?? 0)));
    this.readyTimeoutMs = options.readyTimeoutMs ?? 15_000;
    this.runsPerWorker = Math.max(1, Math.floor(options.runsPerWorker ?? 1));
    this.packAfter = Math.max(0, Math.floor(options.packAfter ?? 0));
    this.sharedMeter = options.sharedMeter ?? typeof SharedArrayBuffer === "function";
    if (this.warmWorkers > 0) void this.prewarm(options.warmLimits ?? DEFAULT_WARM_LIMITS, this.warmWorkers);
  }

  /** Workers alive now (running, idle or starting), for tests and monitoring. */
  get size(): number {
    return this.all.size;
  }

  /** Runs waiting for a worker because all `maxWorkers` are busy. */
  get queued(): number {
    return this.queue.length;
  }

  /** Runs one attempt on a pooled worker, waiting in the queue if every worker is busy. Never rejects. */
  async run(input: RunInput, handlers: RunHandlers): Promise<EngineOutcome> {
    if (this.disposed) return failed("Unavailable", "the sandbox supervisor is disposed", [], []);
    if (handlers.signal?.aborted) return failed("Cancelled", "the run was cancelled", [], []);
    this.lastLimits = input.limits;
    const got = await this.acquire(input.limits, handlers.signal, handlers.tenant);
    if ("outcome" in got) return got.outcome;
    const worker = got.worker;
    const outcome = await worker.execute(input, handlers, this.graceMs, this.sharedMeter);
    worker.load -= 1;
    this.release(worker);
    return outcome;
  }

  /** Spawns and warms workers ahead of demand until `count` are idle or starting (at most `maxWorkers` in all). */
  async prewarm(limits: EngineLimits, count = 1): Promise<void> {
    this.lastLimits = limits;
    const starting: Promise<void>[] = [];
    while (!this.disposed && this.idle.length + starting.length < count && this.all.size < this.maxWorkers) {
      const worker = this.spawn();
      if (!worker) break;
      starting.push(this.warmAhead(worker, limits));
    }
    await Promise.all(starting);
  }

  /** Terminates every worker; runs in progress fail `Unavailable`, and so do runs still queued. */
  dispose(): void {
    this.disposed = true;
    clearTimeout(this.retireTimer);
    for (const worker of [...this.all]) worker.kill();
    this.all.clear();
    this.idle.length = 0;
    for (const waiter of this.queue.splice(0)) waiter.take(undefined);
  }

  /** A worker for one run, claimed for it at once (so runs acquiring together count each other). */
  private async acquire(
    limits: EngineLimits,
    signal: AbortSignal | undefined,
    tenant: string | undefined,
  ): Promise<{ worker: PooledWorker } | { outcome: EngineOutcome }> {
    let worker = this.packable(tenant) ?? this.takeIdle();
    if (worker) return { worker: claim(worker, tenant) };
    for (const member of this.all) if (member.dead && !this.idle.includes(member)) this.all.delete(member);
    if (this.all.size < this.maxWorkers && this.warming <= this.queue.length) {
      worker = this.spawn();
      if (!worker) return { outcome: failed("Unavailable", "the sandbox worker could not be spawned", [], []) };
      claim(worker, tenant);
      await this.warmUp(worker, limits);
      return { worker };
    }
    return new Promise((resolve) => {
      const onAbort = (): void => {
        const at = this.queue.indexOf(waiter);
        if (at >= 0) this.queue.splice(at, 1);
        resolve({ outcome: failed("Cancelled", "the run was cancelled", [], []) });
      };
      const waiter: Waiter = {
        tenant,
        take: (taken) => {
          signal?.removeEventListener("abort", onAbort);
          if (taken) resolve({ worker: taken });
          else resolve({ outcome: failed("Unavailable", "the sandbox supervisor is disposed", [], []) });
        },
      };
      this.queue.push(waiter);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Under load (`packAfter`), the worker busiest with `tenant`'s runs that still has room for one more, if any. */
  private packable(tenant: string | undefined): PooledWorker | undefined {
    if (tenant === undefined || this.runsPerWorker < 2) return undefined;
    let best: PooledWorker | undefined;
    let busy = 0;
    for (const member of this.all) {
      if (member.load > 0) busy += 1;
      if (member.dead || member.tenant !== tenant || member.load === 0 || member.load >= this.runsPerWorker) continue;
      if (!best || member.load > best.load) best = member;
    }
    return busy >= this.packAfter ? best : undefined;
  }

  /**
   * The idle worker released second most recently, or the only one. Not the last released: it posted its
   * outcome moments ago and is probably still preparing its next context. Not the longest idle either: each
   * worker has its own JIT, so spreading back-to-back runs over all of them keeps every one cold.
   */
  private takeIdle(): PooledWorker | undefined {
    for (let i = this.idle.length - 1; i >= 0; i--) {
      const member = this.idle[i] as PooledWorker;
      if (member.dead) {
        this.idle.splice(i, 1);
        this.all.delete(member);
      }
    }
    if (this.idle.length === 0) return undefined;
    return this.idle.splice(Math.max(0, this.idle.length - 2), 1)[0];
  }

  private spawn(): PooledWorker | undefined {
    try {
      const worker = new PooledWorker(this.options.spawn(), this.readyTimeoutMs);
      this.all.add(worker);
      return worker;
    } catch {
      return undefined;
    }
  }

  /** Warms a worker no run asked for yet, then hands it to the queue or the idle list. */
  private async warmAhead(worker: PooledWorker, limits: EngineLimits): Promise<void> {
    this.warming += 1;
    try {
      await this.warmUp(worker, limits);
    } finally {
      this.warming -= 1;
    }
    this.release(worker, true);
  }

  private async warmUp(worker: PooledWorker, limits: EngineLimits): Promise<void> {
    // The run's memory size picks the module to load; its time limit must not cut a cold worker's first run short.
    const warmLimits = { ...limits, timeoutMs: Math.max(limits.timeoutMs, DEFAULT_WARM_LIMITS.timeoutMs * 10) };
    const input: RunInput = { code: WARM_UP_CODE, time: 0, seed: 0, limits: warmLimits, bindings: [], vaultNames: [] };
    await worker.execute(
      input,
      { call: async () => ({ type: "stop", reason: "Unavailable", message: "warm-up" }) },
      this.graceMs,
      this.sharedMeter,
    );
  }

  /**
   * A worker whose run ended (or that warmed up): its room to the next queued run (an empty worker to the
   * first in the queue, a worker still busy with a tenant's runs to the first run of that tenant), else an
   * empty one to the idle list. A worker that died in a run is replaced (refill, once its last run is out);
   * one that died warming up is not (an engine that cannot load would respawn forever), but a queued run
   * still takes it and fails at once rather than wait for a worker that never comes.
   */
  private release(worker: PooledWorker, warmUp = false): void {
    if (this.disposed) {
      worker.kill();
      return;
    }
    if (worker.dead && !warmUp) {
      if (worker.load > 0) return;
      this.all.delete(worker);
      this.refill();
      return;
    }
    const at =
      worker.load === 0
        ? 0
        : this.queue.findIndex(
            (waiter) =>
              waiter.tenant !== undefined && waiter.tenant === worker.tenant && worker.load < this.runsPerWorker,
          );
    const waiter = at >= 0 ? this.queue.splice(at, 1)[0] : undefined;
    if (waiter) {
      waiter.take(claim(worker, waiter.tenant));
      return;
    }
    if (worker.dead) {
      this.all.delete(worker);
      return;
    }
    if (worker.load > 0) return;
    worker.tenant = undefined;
    this.idle.push(worker);
    this.scheduleRetire();
  }

  /** After a worker died: a queued run gets a new worker, and the pool keeps `warmWorkers` (at least one) warm. */
  private refill(): void {
    for (const worker of this.all) if (worker.dead) this.all.delete(worker);
    if (this.queue.length > 0 && this.all.size < this.maxWorkers) {
      const replacement = this.spawn();
      if (replacement) void this.warmAhead(replacement, this.lastLimits ?? DEFAULT_WARM_LIMITS);
      return;
    }
    if (this.lastLimits) void this.prewarm(this.lastLimits, Math.max(1, this.warmWorkers));
  }

  private scheduleRetire(): void {
    if (this.retireTimer !== undefined || this.idle.length <= Math.max(this.maxIdle, this.warmWorkers)) return;
    this.retireTimer = setTimeout(() => {
      this.retireTimer = undefined;
      const keep = Math.max(this.maxIdle, this.warmWorkers);
      while (this.idle.length > keep) {
        const worker = this.idle.shift() as PooledWorker;
        this.all.delete(worker);
        worker.kill();
      }
    }, this.idleRetireMs);
    (this.retireTimer as { unref?: () => void }).unref?.();
  }
}

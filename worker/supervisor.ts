/**
 * Drives sandbox workers over contracts/worker-protocol.ts; used by the page (Web Workers) and the server
 * (worker threads) alike. Keeps a small pool (one run per worker at a time), warms each new worker with
 * a throwaway run, and watches every run: the worker reports busy/idle, and when the guest has been busy
 * longer than `timeoutMs + graceMs` in total (built-ins such as a huge-length `indexOf` never reach the
 * interrupt handler) the worker is terminated, the run fails `Timeout` and a fresh worker replaces it.
 * Cancel asks the worker first and terminates it if it does not finish within the grace. A worker error,
 * or a worker whose "ready" reports that the engine could not load, fails its run `Unavailable` at once. Runtime-neutral; `run` never rejects.
 */
import type { CallRequest, EngineLimits, HostCallAnswer, LogLine, RunInput } from "../contracts/engine";
import { isFromWorker, type FromWorker, type ToWorker } from "../contracts/worker-protocol";
import type { EngineOutcome } from "./run-session";
import { readyError } from "./ready";

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
  /** Idle workers kept for reuse. Default 2. */
  maxIdle?: number;
  /** Time a new worker has to answer "ready". Default 15000. */
  readyTimeoutMs?: number;
}

export interface RunHandlers {
  /** Answers one call of the program; a rejection stops the run with `Unavailable`. */
  call(req: CallRequest): Promise<HostCallAnswer>;
  onLog?(line: LogLine): void;
  signal?: AbortSignal;
}

const WARM_UP_CODE = "const a = [1, 2, 3].map((x) => x * 2); console.log(a); return a.length;";
let nonceCounter = 0;

function newNonce(): string {
  nonceCounter += 1;
  return `${Date.now().toString(36)}-${nonceCounter}-${Math.random().toString(36).slice(2, 10)}`;
}

function failed(reason: "Timeout" | "Cancelled" | "Unavailable", message: string, logs: LogLine[], order: number[]): EngineOutcome {
  return { status: "failed", reason, message, logs, output: [], completionOrder: order };
}

/** One worker and the run it is doing. */
class PooledWorker {
  readonly ready: Promise<void>;
  dead = false;
  private listener: ((message: FromWorker) => void) | undefined;
  private onDeath: ((error: unknown) => void) | undefined;

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
        } else this.listener?.(message);
      });
      port.onError((error) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error("the sandbox worker failed"));
        this.kill();
      });
    });
    this.ready.catch(() => undefined);
  }

  /** Terminates the worker; a run still in progress fails `Unavailable`. */
  kill(): void {
    if (this.dead) return;
    this.dead = true;
    try {
      this.port.terminate();
    } catch {
      // Already gone.
    }
    this.onDeath?.(new Error("the sandbox worker was terminated"));
  }

  /** Runs one program on this worker; resolves with its outcome, never rejects. */
  async execute(input: RunInput, handlers: RunHandlers, graceMs: number): Promise<EngineOutcome> {
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
        this.listener = undefined;
        this.onDeath = undefined;
        resolve(outcome);
      };
      const budget = input.limits.timeoutMs + graceMs;
      const onAbort = (): void => {
        if (settled) return;
        this.send({ type: "cancel", nonce });
        cancelTimer = setTimeout(() => {
          finish(failed("Cancelled", "the run was cancelled", logs, order));
          this.kill();
        }, graceMs);
      };
      this.onDeath = () => finish(failed("Unavailable", "the sandbox worker failed", logs, order));
      this.listener = (message) => {
        if (settled || !("nonce" in message) || message.nonce !== nonce) return;
        switch (message.type) {
          case "busy":
            if (message.busy && busySince === undefined) {
              busySince = Date.now();
              watchdog = setTimeout(() => {
                finish(failed("Timeout", `the program ran longer than ${input.limits.timeoutMs} ms`, logs, order));
                this.kill();
              }, Math.max(0, budget - busyTotal));
            } else if (!message.busy && busySince !== undefined) {
              busyTotal += Date.now() - busySince;
              busySince = undefined;
              clearTimeout(watchdog);
            }
            break;
          case "log":
            logs.push(message.line);
            try {
              handlers.onLog?.(message.line);
            } catch {
              // A failing listener must not affect the run.
            }
            break;
          case "call":
            this.answer(nonce, message.call, handlers, order, () => settled);
            break;
          case "done":
            finish(message.outcome as EngineOutcome);
            break;
        }
      };
      if (handlers.signal?.aborted) {
        finish(failed("Cancelled", "the run was cancelled", [], []));
        return;
      }
      handlers.signal?.addEventListener("abort", onAbort, { once: true });
      this.send({ type: "run", nonce, input });
    });
  }

  private answer(nonce: string, call: CallRequest, handlers: RunHandlers, order: number[], isSettled: () => boolean): void {
    let pending: Promise<HostCallAnswer>;
    try {
      pending = Promise.resolve(handlers.call(call));
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending
      .catch((): HostCallAnswer => ({ type: "stop", reason: "Unavailable", message: "the host failed to answer a call" }))
      .then((answer) => {
        if (isSettled()) return;
        if (answer.type === "ok" || answer.type === "error") order.push(call.index);
        this.send({ type: "answer", nonce, index: call.index, answer });
      });
  }

  private send(message: ToWorker): void {
    if (this.dead) return;
    try {
      this.port.post(message);
    } catch {
      this.kill();
      this.onDeath?.(new Error("post failed"));
    }
  }
}

export class SandboxSupervisor {
  private readonly idle: PooledWorker[] = [];
  private readonly busy = new Set<PooledWorker>();
  private readonly graceMs: number;
  private readonly maxIdle: number;
  private readonly readyTimeoutMs: number;
  private lastLimits: EngineLimits | undefined;
  private disposed = false;

  constructor(private readonly options: SupervisorOptions) {
    this.graceMs = options.graceMs ?? 1000;
    this.maxIdle = options.maxIdle ?? 2;
    this.readyTimeoutMs = options.readyTimeoutMs ?? 15_000;
  }

  /** Runs one attempt on a pooled worker. Never rejects. */
  async run(input: RunInput, handlers: RunHandlers): Promise<EngineOutcome> {
    if (this.disposed) return failed("Unavailable", "the sandbox supervisor is disposed", [], []);
    this.lastLimits = input.limits;
    let worker = this.takeIdle();
    if (!worker) {
      worker = this.spawn();
      if (!worker) return failed("Unavailable", "the sandbox worker could not be spawned", [], []);
      await this.warmUp(worker, input.limits);
    }
    this.busy.add(worker);
    const outcome = await worker.execute(input, handlers, this.graceMs);
    this.busy.delete(worker);
    if (worker.dead) this.replace();
    else this.release(worker);
    return outcome;
  }

  /** Spawns and warms one worker ahead of demand if none is idle. */
  async prewarm(limits: EngineLimits): Promise<void> {
    this.lastLimits = limits;
    if (this.disposed || this.idle.length > 0) return;
    const worker = this.spawn();
    if (!worker) return;
    await this.warmUp(worker, limits);
    this.release(worker);
  }

  /** Terminates every worker; runs in progress fail `Unavailable`. */
  dispose(): void {
    this.disposed = true;
    for (const worker of [...this.idle, ...this.busy]) worker.kill();
    this.idle.length = 0;
  }

  private takeIdle(): PooledWorker | undefined {
    let worker = this.idle.pop();
    while (worker?.dead) worker = this.idle.pop();
    return worker;
  }

  private spawn(): PooledWorker | undefined {
    try {
      return new PooledWorker(this.options.spawn(), this.readyTimeoutMs);
    } catch {
      return undefined;
    }
  }

  private async warmUp(worker: PooledWorker, limits: EngineLimits): Promise<void> {
    const input: RunInput = { code: WARM_UP_CODE, time: 0, seed: 0, limits, bindings: [], vaultNames: [] };
    await worker.execute(input, { call: async () => ({ type: "stop", reason: "Unavailable", message: "warm-up" }) }, this.graceMs);
  }

  private release(worker: PooledWorker): void {
    if (this.disposed || worker.dead || this.idle.length >= this.maxIdle) worker.kill();
    else this.idle.push(worker);
  }

  private replace(): void {
    if (this.disposed || this.idle.length > 0 || !this.lastLimits) return;
    void this.prewarm(this.lastLimits);
  }
}

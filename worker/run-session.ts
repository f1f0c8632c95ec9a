/**
 * One attempt of one program in a fresh QuickJS runtime and context. Owns every handle it creates and
 * disposes them (pending promises first) when the attempt ends. The guest runs in slices (start, then
 * one `executePendingJobs` per event); only slice time counts toward `timeoutMs`. Calls the guest issues
 * are numbered, checked against the replay record, queued behind `maxPendingCalls` and sent to the host
 * after the slice; answers and recorded outcomes are delivered one at a time. A paused call's promise
 * stays pending while the program runs on; the attempt ends `waiting` only when nothing else can run
 * (a program that returns first completes). Nothing here throws out:
 * every failure becomes a `failed` outcome with one of the contract's reasons.
 *
 * Over 400 lines on purpose: one attempt's host side is one state machine (calls in flight, paused calls,
 * replay, limits, the outcome) over one QuickJS context; split, each path through a call would cross files.
 */

import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from "quickjs-emscripten-core";
import type {
  CallOutcome,
  CallRequest,
  EngineLimits,
  FailureReason,
  HostCallAnswer,
  LogLevel,
  LogLine,
  OutputItem,
  RunInput,
  RunOutcome,
} from "../contracts/engine";
import { withBindingHint } from "./binding-hint";
import { CANONICAL_MAX_DEPTH, canonicalJson, truncateUtf8, utf8Length } from "./canonical-json";
import {
  BRIDGE,
  LOG_BOX_LINES,
  LOG_LEVEL_CHARS,
  PRELUDE_PARTS,
  PRELUDE_SOURCE,
  type PreludeConfig,
  type PreludePart,
} from "./prelude";
import { evalPreludeCore } from "./prelude-bytecode";
import { evictModule, type SandboxModule } from "./quickjs-module";
import { ReplaySchedule } from "./replay";
import { binaryResult } from "./result-value";

/** What a host gives the engine for one run. */
export interface EngineHost {
  /** Answers one call; a rejection stops the run with `Unavailable`. */
  call(req: CallRequest): Promise<HostCallAnswer>;
  /** Each log line as it is kept (after the output cap). */
  onLog?(line: LogLine): void;
  /** The lines kept by one take of the log box, at once (after `onLog` for each): a host that forwards lines sends them together. */
  onLogs?(lines: LogLine[]): void;
  /** True while guest code runs, false while the program only waits for calls (drives a watchdog). */
  onBusy?(busy: boolean): void;
  /** Abort → the run ends `Cancelled` at the next point the host regains control. */
  signal?: AbortSignal;
  /**
   * Polled by the interrupt handler while guest code runs: true → the run ends `Cancelled` at once, even in
   * the middle of a long slice (where `signal` cannot be heard: the host's thread is busy running the guest).
   */
  cancelled?(): boolean;
  /**
   * CPU time of the thread that runs the guest, in ms, where the host can read it (Node worker threads on
   * Linux). The time limit counts the program's running time: when the wall clock says it is spent, this
   * clock is asked, and time the thread spent waiting for a core (a busy machine) is not counted.
   */
  threadCpuMs?(): number;
  /** How much of the guest's busy (wall) time so far was its thread waiting for a core (drives a watchdog). */
  onWaited?(ms: number): void;
}

/** A run outcome plus the order in which call outcomes were delivered to the program. */
export type EngineOutcome = RunOutcome & { completionOrder: number[] };

/** Longest argument JSON a call may carry, in UTF-16 units. */
export const ARGS_MAX_CHARS = 1 << 20;
const MIB = 1024 * 1024;
/**
 * When the heap cannot spare max(1 MiB, memoryMb / 8), the program is near the cap. QuickJS then may
 * fail to allocate even its "out of memory" error and throw `null`, so the reason comes from this flag.
 */
const PRESSURE_MIN_BYTES = MIB;
const APP_ERRORS = new Set(["AppCallDenied", "AppCallFailed", "AppInputRequired", "VaultDenied"]);
const STOP_REASONS = new Set<FailureReason>(["ReplayMismatch", "Cancelled", "Unavailable"]);
const LEVEL_OF_CHAR: Record<string, LogLevel> = Object.fromEntries(
  Object.entries(LOG_LEVEL_CHARS).map(([level, char]) => [char, level as LogLevel]),
);
const now: () => number =
  typeof performance !== "undefined" && typeof performance.now === "function"
    ? () => performance.now()
    : () => Date.now();

/**
 * A new runtime and context with the prelude's core compiled and its run-independent half run (intrinsics
 * saved, globals removed, Date, Math.random and console in place): what every run starts from. That is most
 * of the cost of starting a run, so the engine prepares contexts ahead (engine.ts) and hands each to exactly
 * one run, which disposes it; nothing in it has seen a program.
 */
export interface FreshContext {
  runtime: QuickJSRuntime;
  context: QuickJSContext;
  /** The core's `configure` function (see prelude.ts). */
  prelude: QuickJSHandle;
}

/** Creates a `FreshContext` in `module`, or undefined if its heap cannot take one right now. */
export function prepareContext(module: SandboxModule): FreshContext | undefined {
  if (module.broken || !module.canAllocate(PRELUDE_SOURCE.length * 5 + 65536)) return undefined;
  const runtime = module.quickjs.newRuntime();
  let context: QuickJSContext | undefined;
  try {
    runtime.setMaxStackSize(module.maxStackBytes);
    context = runtime.newContext();
    return { runtime, context, prelude: compilePrelude(module, context) };
  } catch (error) {
    context?.dispose();
    runtime.dispose();
    throw error;
  }
}

/** Disposes a prepared context that no run took. */
export function disposeFresh(fresh: FreshContext): void {
  fresh.prelude.dispose();
  fresh.context.dispose();
  fresh.runtime.dispose();
}

/** Loads the prelude's core (bytecode or source) and runs its run-independent half; returns its `configure` function. */
function compilePrelude(module: SandboxModule, ctx: QuickJSContext): QuickJSHandle {
  const prelude = evalPreludeCore(module, ctx);
  if (prelude.error) {
    prelude.error.dispose();
    throw new Error("the sandbox prelude failed to load");
  }
  const configure = ctx.callFunction(prelude.value, ctx.undefined);
  prelude.value.dispose();
  if (configure.error) {
    configure.error.dispose();
    throw new Error("the sandbox prelude failed to load");
  }
  return configure.value;
}

/** Takes that carried calls, the calls they carried and the guest's promise jobs run, over all runs (for tests). */
const taken = { takes: 0, calls: 0, jobs: 0 };

/** How many crossings brought calls out of guests so far, how many calls they brought, how many jobs ran. */
export function callTakeCounts(): { takes: number; calls: number; jobs: number } {
  return { ...taken };
}

/** Strings at least this long go into the guest through `encodeInto` instead of quickjs-emscripten's copy. */
const FAST_STRING_CHARS = 1024;

/** What `ctx.newString` itself uses inside quickjs-emscripten-core 0.32 (checked before use; else the plain path). */
interface ContextInternals {
  ffi: {
    QTS_NewString(ctx: number, pointer: number): number;
    /** JSPromiseStateEnum: 0 pending, 1 fulfilled, 2 rejected, -1 not a promise. */
    QTS_PromiseState?(ctx: number, value: number): number;
  };
  ctx: { value: number };
  memory: { heapValueHandle(pointer: number): QuickJSHandle };
}

/** The UTF-8 length of `text` if it is over `max` bytes, else 0; skips the count when even 3 bytes per unit fit. */
function utf8Over(text: string, max: number): number {
  if (text.length * 3 <= max) return 0;
  const bytes = utf8Length(text);
  return bytes > max ? bytes : 0;
}

class SandboxMemoryError extends Error {
  override name = "SandboxMemoryError";
}

type Halt = { reason: FailureReason; message: string };
type Ending =
  | { status: "completed"; valueJson: string }
  | { status: "failed"; reason: FailureReason; message: string }
  | { status: "waiting"; index: number };

export class RunSession {
  private readonly limits: EngineLimits;
  private readonly bindings: Set<string>;
  private readonly replay: ReplaySchedule;
  private runtime: QuickJSRuntime | undefined;
  private context: QuickJSContext | undefined;
  private program: QuickJSHandle | undefined;
  /** The configured prelude's `bridge` (prelude.ts): starts the program, hands over queued calls, settles them. */
  private bridge: QuickJSHandle | undefined;
  /** The number `BRIDGE.take`, made once per run. */
  private takeOp: QuickJSHandle | undefined;
  /** The prelude's slot of each issued call not yet settled, by call index. */
  private readonly slots = new Map<number, number>();
  /** Slots of calls taken so far (the prelude numbers its queued calls 0, 1, … in the order it takes them out). */
  private takenSlots = 0;
  /** Whether guest code ran since the last take, so calls may be queued. */
  private mayHaveCalls = false;
  private nextIndex = 0;
  private readonly inflight = new Set<number>();
  private readonly queue: CallRequest[] = [];
  private readonly outbox: CallRequest[] = [];
  private readonly pausedAt: number[] = [];
  private halt: Halt | undefined;
  private timedOut = false;
  /** Set once the heap could not spare PRESSURE_BYTES: an error after that is reported as `Memory`. */
  private memoryPressure = false;
  private readonly pressureBytes: number;
  /** The module's allocation failures when this run began (see SandboxModule.allocationFailures). */
  private readonly allocationFailuresAtStart: number;
  private guestMs = 0;
  /** The thread's CPU clock when the run began (`threadCpuMs`), if the host has one. */
  private cpuAtStart: number | undefined;
  /** Before this wall-clock reading the CPU clock cannot have spent the limit (it last said how much was left). */
  private cpuCheckAfter = 0;
  private sliceStart = 0;
  private inSlice = false;
  private pumping = false;
  /** The runtime can no longer be freed safely; it is abandoned with its module. */
  private corrupt = false;
  private readonly logs: LogLine[] = [];
  private logBytes = 0;
  /** The run's log box (prelude.ts `console`): lines the guest logged that the host has not taken yet. */
  private logBox: QuickJSHandle | undefined;
  /** Lines the log box may gather before the guest calls `hostLog()` (see onGuestLog), and when it last did. */
  private logBatch = 1;
  private lastLogTake = Number.NEGATIVE_INFINITY;
  private logsClosed = false;
  private readonly output: OutputItem[] = [];
  private outputBytes = 0;
  private readonly completionOrder: number[] = [];
  private done = false;
  private resolveDone!: (outcome: EngineOutcome) => void;
  private readonly finished = new Promise<EngineOutcome>((resolve) => {
    this.resolveDone = resolve;
  });

  constructor(
    private readonly module: SandboxModule,
    private readonly input: RunInput,
    private readonly host: EngineHost,
    /** A context prepared ahead of the run by `prepareContext` (for this run only); made here if absent. */
    private fresh?: FreshContext,
  ) {
    this.limits = input.limits;
    this.bindings = new Set(input.bindings);
    this.replay = new ReplaySchedule(input.replay);
    this.pressureBytes = Math.max(PRESSURE_MIN_BYTES, (this.limits.memoryMb * MIB) / 8);
    this.allocationFailuresAtStart = module.allocationFailures;
  }

  /** Runs the attempt; resolves with its outcome. The engine calls `dispose` afterwards. */
  async run(): Promise<EngineOutcome> {
    const signal = this.host.signal;
    const onAbort = () => this.stop({ reason: "Cancelled", message: "the run was cancelled" });
    if (signal?.aborted) {
      if (this.fresh) disposeFresh(this.fresh);
      this.fresh = undefined;
      return this.outcomeNow({ reason: "Cancelled", message: "the run was cancelled" });
    }
    signal?.addEventListener("abort", onAbort, { once: true });
    this.cpuAtStart = this.readCpu();
    try {
      this.host.onBusy?.(true);
      this.setUp();
      this.pump();
    } catch (error) {
      this.crash(error);
    } finally {
      if (!this.pumping) this.host.onBusy?.(false);
    }
    const outcome = await this.finished;
    signal?.removeEventListener("abort", onAbort);
    return outcome;
  }

  private setUp(): void {
    const fresh = this.fresh;
    this.fresh = undefined;
    let prelude: QuickJSHandle | undefined;
    if (fresh) {
      this.runtime = fresh.runtime;
      this.context = fresh.context;
      prelude = fresh.prelude;
    } else {
      const runtime = this.module.quickjs.newRuntime();
      this.runtime = runtime;
      runtime.setMaxStackSize(this.module.maxStackBytes);
      this.context = runtime.newContext();
    }
    const runtime = this.runtime;
    const ctx = this.context;
    runtime.setInterruptHandler(() => this.shouldInterrupt());
    const config: PreludeConfig = {
      bindings: this.input.bindings,
      vaultNames: this.input.vaultNames,
      time: this.input.time,
      seed: this.input.seed,
      argsMax: ARGS_MAX_CHARS,
      valueMax: this.limits.outputBytes,
      logMax: this.limits.outputBytes,
    };
    const configJson = JSON.stringify(config);
    try {
      this.requireHeap((prelude ? 0 : PRELUDE_SOURCE.length) + configJson.length + this.input.code.length);
      this.slice(() => {
        prelude ??= compilePrelude(this.module, ctx);
        this.startProgram(ctx, prelude, configJson);
      });
    } finally {
      if (prelude?.alive) prelude.dispose();
    }
  }

  /** Configures the prepared core with this run's settings and host functions, then starts the program. */
  private startProgram(ctx: QuickJSContext, prelude: QuickJSHandle, configJson: string): void {
    this.logBox = ctx.newObject(ctx.null);
    const fns = [
      ctx.newFunction("hostLog", () => this.onGuestLog()),
      ctx.newFunction("hostOut", (kind, text) => this.onGuestOutput(kind, text)),
      ctx.newFunction("hostLoad", (name) => this.onGuestLoad(name)),
      ctx.newString(configJson),
    ];
    const bridge = ctx.callFunction(prelude, ctx.undefined, [...fns, this.logBox]);
    prelude.dispose();
    for (const handle of fns) handle.dispose();
    if (bridge.error) {
      bridge.error.dispose();
      throw new Error("the sandbox prelude failed to start");
    }
    this.bridge = bridge.value;
    const code = ctx.newString(this.input.code);
    const program = this.callBridge(BRIDGE.start, 0, code);
    code.dispose();
    if (program.error) this.failFromHandle(program.error);
    else this.program = program.value;
  }

  /** Runs guest jobs, dispatches calls and delivers recorded outcomes until the run must wait or ends. */
  private pump(): void {
    if (this.done || this.pumping) return;
    this.pumping = true;
    this.host.onBusy?.(true);
    try {
      for (;;) {
        if (this.finishIfHalted()) return;
        const runtime = this.runtime;
        const ctx = this.context;
        if (!runtime || !ctx) return;
        if (runtime.hasPendingJob()) {
          const result = this.slice(() => runtime.executePendingJobs());
          if (result.error) this.failFromHandle(result.error);
          else taken.jobs += result.value;
          if (this.finishIfHalted()) return;
        }
        this.takeCalls();
        if (this.finishIfHalted()) return;
        this.dispatch();
        if (this.program && this.settleProgram(ctx, this.program)) return;
        const next = this.replay.next();
        if (next) {
          this.deliver(next.index, next.outcome);
          continue;
        }
        if (runtime.hasPendingJob()) continue;
        if (this.inflight.size === 0 && this.queue.length === 0) {
          if (this.replay.blocked) {
            this.finish({
              status: "failed",
              reason: "ReplayMismatch",
              message: `the program did not issue recorded call ${this.replay.awaited ?? "?"} before waiting`,
            });
          } else if (this.pausedAt.length > 0) {
            // Nothing else can run: every pending call waits for a person's decision.
            this.finish({ status: "waiting", index: Math.min(...this.pausedAt) });
          } else if (this.memoryObserved()) {
            // The heap ran out inside a promise job: QuickJS rejects that job's promise instead of throwing,
            // so a chain that exhausted memory drains the queue; the run failed on memory, not on a promise.
            this.finish({ status: "failed", reason: "Memory", message: this.memoryMessage() });
          } else {
            this.finish({
              status: "failed",
              reason: "Error",
              message: "the program is waiting for a promise that can never settle",
            });
          }
        }
        return;
      }
    } catch (error) {
      this.crash(error);
    } finally {
      this.pumping = false;
      this.host.onBusy?.(false);
    }
  }

  private slice<T>(fn: () => T): T {
    this.inSlice = true;
    this.mayHaveCalls = true;
    this.sliceStart = now();
    try {
      return fn();
    } finally {
      this.guestMs += now() - this.sliceStart;
      this.inSlice = false;
    }
  }

  private shouldInterrupt(): boolean {
    if (this.halt || this.timedOut) return true;
    if (this.host.cancelled?.()) {
      this.halt = { reason: "Cancelled", message: "the run was cancelled" };
      return true;
    }
    if (!this.memoryPressure && !this.module.canAllocate(this.pressureBytes)) this.memoryPressure = true;
    if (!this.inSlice) return false;
    const at = now();
    const wall = this.guestMs + (at - this.sliceStart);
    if (wall > this.limits.timeoutMs && at >= this.cpuCheckAfter && !this.cpuLeft(wall, at)) {
      this.timedOut = true;
      return true;
    }
    return false;
  }

  /**
   * The wall clock says the program spent its time limit: is it still under by its thread's CPU clock (the
   * thread waited for a core)? The CPU clock counts from the run's start, so the host's own work between
   * slices counts too: it never allows more than the wall clock would have without the waits. While it
   * says yes, it is asked again only once as much wall time has passed as it said was left.
   */
  private cpuLeft(wall: number, at: number): boolean {
    const cpu = this.cpuAtStart === undefined ? undefined : this.readCpu();
    if (cpu === undefined) return false;
    const spent = cpu - (this.cpuAtStart as number);
    if (spent >= this.limits.timeoutMs) return false;
    this.cpuCheckAfter = at + (this.limits.timeoutMs - spent);
    this.host.onWaited?.(wall - spent);
    return true;
  }

  private readCpu(): number | undefined {
    try {
      const ms = this.host.threadCpuMs?.();
      return typeof ms === "number" && Number.isFinite(ms) ? ms : undefined;
    } catch {
      return undefined;
    }
  }

  /** True when the program's promise has settled and the run is finished. */
  private settleProgram(ctx: QuickJSContext, program: QuickJSHandle): boolean {
    // Pending, the case of every pump but the last, is read straight from the FFI (getPromiseState makes an object).
    const inner = ctx as unknown as Partial<ContextInternals>;
    if (inner.ffi?.QTS_PromiseState && inner.ctx && program.alive) {
      if (inner.ffi.QTS_PromiseState(inner.ctx.value, program.value as unknown as number) === 0) return false;
    }
    const state = ctx.getPromiseState(program);
    if (state.type === "pending") return false;
    if (state.type === "rejected") {
      this.failFromHandle(state.error);
      this.finishIfHalted();
      return true;
    }
    const value = state.value;
    const envelope = ctx.typeof(value) === "string" ? this.readString(value) : "";
    if (value !== program) value.dispose();
    const tag = envelope.charAt(0);
    const body = envelope.slice(1);
    if (tag === "V") {
      const bytes = utf8Over(body, this.limits.outputBytes);
      if (bytes > 0) this.finish(this.tooLarge(bytes));
      else this.finish({ status: "completed", valueJson: body });
    } else if (tag === "T") {
      this.finish(this.tooLarge(Number(body)));
    } else if (tag === "E") {
      this.finish(this.programError(body));
    } else {
      this.finish({ status: "failed", reason: "Unavailable", message: "the sandbox returned no result" });
    }
    return true;
  }

  private tooLarge(size: number): Ending {
    return {
      status: "failed",
      reason: "OutputTooLarge",
      message: `the return value is larger than ${this.limits.outputBytes} bytes (at least ${size})`,
    };
  }

  private programError(text: string): Ending {
    if (this.memoryObserved()) {
      return { status: "failed", reason: "Memory", message: this.memoryMessage() };
    }
    return { status: "failed", reason: "Error", message: withBindingHint(text, this.input.code, this.input.bindings) };
  }

  /**
   * Whether the host saw the memory run out: the heap near the cap, or an allocation the fixed memory
   * could not serve. Never the guest's error name or text, which a program can forge.
   */
  private memoryObserved(): boolean {
    return this.memoryPressure || this.module.allocationFailures > this.allocationFailuresAtStart;
  }

  private memoryMessage(): string {
    return `the program ran out of memory (limit ${this.limits.memoryMb} MiB)`;
  }

  /** An exception surfaced outside the program's own envelope: interrupt, out of memory, or a bug. */
  private failFromHandle(handle: QuickJSHandle): void {
    let text = "";
    try {
      const ctx = this.context;
      if (ctx && !this.timedOut && !this.halt) {
        const name = ctx.getProp(handle, "name");
        const message = ctx.getProp(handle, "message");
        if (ctx.typeof(name) === "string" && ctx.typeof(message) === "string") {
          text = `${this.readString(name)}: ${this.readString(message)}`;
        }
        name.dispose();
        message.dispose();
      }
    } finally {
      handle.dispose();
    }
    if (this.timedOut || this.halt) return;
    if (this.memoryObserved()) this.halt = { reason: "Memory", message: this.memoryMessage() };
    else this.halt = { reason: "Error", message: text || "the program failed" };
  }

  private finishIfHalted(): boolean {
    if (this.done) return true;
    if (this.timedOut) {
      this.finish({
        status: "failed",
        reason: "Timeout",
        message: `the program ran longer than ${this.limits.timeoutMs} ms`,
      });
      return true;
    }
    if (this.halt) {
      this.finish({ status: "failed", reason: this.halt.reason, message: this.halt.message });
      return true;
    }
    return false;
  }

  private stop(halt: Halt): void {
    if (this.done) return;
    this.halt ??= halt;
    if (!this.pumping) this.finishIfHalted();
  }

  private crash(error: unknown): void {
    if (error instanceof RangeError && /call stack/i.test(error.message)) {
      // Some QuickJS C paths (parser, JSON, flat) outgrow the host's native stack before QuickJS's own
      // check fires; the runtime is then inconsistent and is dropped with its module.
      this.corrupt = true;
      evictModule(this.module);
      this.halt ??= { reason: "Error", message: "InternalError: stack overflow" };
    } else if (error instanceof SandboxMemoryError) {
      this.halt ??= { reason: "Memory", message: this.memoryMessage() };
    } else {
      this.corrupt = true;
      evictModule(this.module);
      this.halt ??= { reason: "Unavailable", message: "the sandbox failed and was reset" };
    }
    this.finishIfHalted();
  }

  private finish(ending: Ending): void {
    if (this.done) return;
    // A slice that was stopped (time, memory, cancel) may leave lines in the box: they are read without guest code.
    if (ending.status === "failed") this.takeLogBox();
    this.done = true;
    this.resolveDone({ ...ending, logs: this.logs, output: this.output, completionOrder: this.completionOrder });
  }

  private outcomeNow(halt: Halt): EngineOutcome {
    this.halt = halt;
    this.finishIfHalted();
    return { status: "failed", reason: halt.reason, message: halt.message, logs: [], output: [], completionOrder: [] };
  }

  // Calls -----------------------------------------------------------------------------------------

  /** Calls `bridge(op, slot, value)` in the guest (see prelude.ts); the caller disposes `value` and the result. */
  private callBridge(op: number, slot: number, value: QuickJSHandle) {
    const ctx = this.context as QuickJSContext;
    const opHandle = ctx.newNumber(op);
    const slotHandle = ctx.newNumber(slot);
    try {
      return ctx.callFunction(this.bridge as QuickJSHandle, ctx.undefined, opHandle, slotHandle, value);
    } finally {
      opHandle.dispose();
      slotHandle.dispose();
    }
  }

  /**
   * Takes the calls the guest queued since the last take (one string of frames, see prelude.ts) and issues
   * them in order. Runs as a slice: it is guest code, so it counts toward the time limit and can be interrupted.
   */
  private takeCalls(): void {
    if (!this.mayHaveCalls || !this.bridge || this.halt || this.timedOut || this.done) return;
    const ctx = this.context as QuickJSContext;
    this.takeOp ??= ctx.newNumber(BRIDGE.take);
    const op = this.takeOp;
    const result = this.slice(() => ctx.callFunction(this.bridge as QuickJSHandle, ctx.undefined, op));
    this.mayHaveCalls = false;
    if (result.error) {
      this.failFromHandle(result.error);
      return;
    }
    let text = "";
    try {
      // A number (read without a type check: the prelude gives a number or a frames string, and a string of
      // frames reads as NaN) is 0 when nothing was queued, the common case of a slice that only resumed the
      // program, or the length of frames too long to copy out unchecked; else the value is the frames.
      const chars = ctx.getNumber(result.value);
      if (chars === 0) return;
      if (Number.isNaN(chars)) text = ctx.getString(result.value);
      else text = this.takeLarge(ctx, chars);
    } finally {
      result.value.dispose();
    }
    if (text) taken.takes += 1;
    let at = 0;
    while (at < text.length) {
      const name = readFrame(text, at);
      const args = name && readFrame(text, name.end);
      if (!name || !args) {
        this.stop({ reason: "Unavailable", message: "the sandbox sent a malformed call" });
        return;
      }
      at = args.end;
      taken.calls += 1;
      this.issueCall(this.takenSlots++, name.text, args.text);
    }
  }

  /** Takes queued frames of `chars` UTF-16 units once the heap can hold their UTF-8 copy. */
  private takeLarge(ctx: QuickJSContext, chars: number): string {
    if (!this.module.canAllocate(chars * 3 + 64)) this.memoryExhausted();
    const large = ctx.newNumber(1);
    try {
      const result = this.slice(() =>
        ctx.callFunction(this.bridge as QuickJSHandle, ctx.undefined, this.takeOp as QuickJSHandle, large),
      );
      this.mayHaveCalls = false;
      if (result.error) {
        this.failFromHandle(result.error);
        return "";
      }
      try {
        return ctx.typeof(result.value) === "string" ? ctx.getString(result.value) : "";
      } finally {
        result.value.dispose();
      }
    } finally {
      large.dispose();
    }
  }

  /** Checks and numbers one call the guest queued in `slot`, rejecting it at once if it cannot be sent. */
  private issueCall(slot: number, binding: string, args: string): void {
    // A call queued while the run is ending is never settled: nothing runs after the run ends.
    if (this.halt || this.timedOut || this.done) return;
    if (!this.bindings.has(binding) && binding !== "$search" && binding !== "$describe") {
      this.rejectSlot(slot, { name: "TypeError", message: `unknown binding ${JSON.stringify(binding.slice(0, 200))}` });
      return;
    }
    if (args.length > ARGS_MAX_CHARS) {
      this.rejectSlot(slot, { name: "RangeError", message: `arguments of apps.${binding} are too large` });
      return;
    }
    let argsJson: string;
    try {
      argsJson = canonicalJson(args);
    } catch (error) {
      if (error instanceof RangeError) {
        this.rejectSlot(slot, {
          name: "AppCallFailed",
          message: `arguments of apps.${binding} are nested deeper than ${CANONICAL_MAX_DEPTH} levels, the most a call can carry; nothing was sent`,
          details: { reason: "invalid_arguments", maxDepth: CANONICAL_MAX_DEPTH },
        });
      } else {
        this.rejectSlot(slot, { name: "RangeError", message: `arguments of apps.${binding} could not be read` });
      }
      return;
    }
    const index = this.nextIndex++;
    const check = this.replay.issue(index, binding, argsJson);
    if (check.kind === "mismatch") {
      this.halt ??= { reason: "ReplayMismatch", message: check.message };
      this.outbox.length = 0;
      return;
    }
    this.slots.set(index, slot);
    if (check.kind === "live") this.outbox.push({ index, binding, argsJson });
  }

  private dispatch(): void {
    if (this.halt) return;
    for (const req of this.outbox.splice(0)) this.queue.push(req);
    while (this.inflight.size < Math.max(1, this.limits.maxPendingCalls) && this.queue.length > 0) {
      const req = this.queue.shift() as CallRequest;
      this.inflight.add(req.index);
      let answer: Promise<HostCallAnswer>;
      try {
        answer = Promise.resolve(this.host.call(req));
      } catch {
        answer = Promise.reject(new Error("host call threw"));
      }
      answer.then(
        (value) => this.onAnswer(req.index, value),
        () =>
          this.onAnswer(req.index, {
            type: "stop",
            reason: "Unavailable",
            message: "the host failed to answer a call",
          }),
      );
    }
  }

  private onAnswer(index: number, answer: HostCallAnswer): void {
    if (this.done || !this.inflight.has(index)) return;
    this.inflight.delete(index);
    const type = (answer as { type?: unknown } | null)?.type;
    if (type === "pause") {
      // Its promise stays pending and the program runs on; the attempt waits only once nothing else can run.
      this.pausedAt.push(index);
    } else if (type === "stop") {
      const stop = answer as { reason?: unknown; message?: unknown };
      const reason = STOP_REASONS.has(stop.reason as FailureReason) ? (stop.reason as FailureReason) : "Unavailable";
      this.stop({ reason, message: typeof stop.message === "string" ? stop.message : "the host stopped the run" });
      return;
    } else if (type === "ok" || type === "error") {
      try {
        this.deliver(index, answer as CallOutcome);
      } catch (error) {
        this.crash(error);
        return;
      }
    } else {
      this.stop({ reason: "Unavailable", message: "the host sent a malformed answer" });
      return;
    }
    this.pump();
  }

  /** Settles the program's promise for call `index` with an outcome (live or recorded). */
  private deliver(index: number, outcome: CallOutcome): void {
    this.completionOrder.push(index);
    const slot = this.slots.get(index);
    if (slot === undefined) return;
    this.slots.delete(index);
    if (outcome.type === "ok" && typeof outcome.resultJson === "string") {
      const bytes = utf8Over(outcome.resultJson, this.resultMaxBytes());
      if (bytes > 0) {
        this.rejectSlot(slot, {
          name: "AppCallFailed",
          message: `the result is too large for the sandbox (${bytes} bytes)`,
          details: { reason: "ResultTooLarge", bytes },
        });
        return;
      }
      this.requireHeap(outcome.resultJson.length);
      const ctx = this.context as QuickJSContext;
      const value = binaryResult(ctx, this.module, outcome.resultJson) ?? this.newString(outcome.resultJson);
      this.settleSlot(slot, BRIDGE.resolve, value);
      return;
    }
    const failure = outcome as Partial<Extract<CallOutcome, { type: "error" }>>;
    const name = APP_ERRORS.has(failure.name as string) ? (failure.name as string) : "AppCallFailed";
    const details =
      failure.details !== null && typeof failure.details === "object" && !Array.isArray(failure.details)
        ? failure.details
        : {};
    this.rejectSlot(slot, {
      name,
      message: typeof failure.message === "string" ? failure.message : "the call failed",
      details,
    });
  }

  private resultMaxBytes(): number {
    return (Math.max(1, this.limits.memoryMb) * MIB) / 4;
  }

  /** Rejects the guest's promise of the call in `slot` with an error envelope (see the prelude's `appError`). */
  private rejectSlot(slot: number, error: { name: string; message: string; details?: unknown }): void {
    let envelope: string;
    try {
      envelope = JSON.stringify(error);
    } catch {
      envelope = JSON.stringify({ name: error.name, message: error.message, details: {} });
    }
    this.requireHeap(envelope.length);
    const ctx = this.context as QuickJSContext;
    const value = ctx.newString(envelope);
    this.settleSlot(slot, BRIDGE.reject, value);
  }

  /**
   * Settles the guest's promise of the call in `slot` with `value` (disposed here). Runs as a slice: the
   * prelude parses the result (or builds the error) there, which is guest work under the time limit.
   */
  private settleSlot(slot: number, op: number, value: QuickJSHandle): void {
    let result: ReturnType<RunSession["callBridge"]>;
    try {
      result = this.slice(() => this.callBridge(op, slot, value));
    } finally {
      value.dispose();
    }
    if (result.error) this.failFromHandle(result.error);
    else result.value.dispose();
  }

  // Logs and output -------------------------------------------------------------------------------

  /**
   * The guest's `hostLog()`: the host takes the lines waiting in the log box and answers the bytes the record
   * still keeps. It also sets how many lines the box may gather before the next `hostLog()` (`batch`): 1 when
   * lines come slowly (the last take was 20 ms or more ago), so a line before a long computation is seen at
   * once, doubling up to LOG_BOX_LINES while they come fast, so a burst costs one host call per batch.
   */
  private onGuestLog(): QuickJSHandle {
    const ctx = this.context as QuickJSContext;
    this.takeLogBox();
    const at = now();
    this.logBatch = at - this.lastLogTake >= 20 ? 1 : Math.min(LOG_BOX_LINES, this.logBatch * 2);
    this.lastLogTake = at;
    const box = this.logBox;
    if (box?.alive) {
      const batch = ctx.newNumber(this.logBatch);
      ctx.setProp(box, "batch", batch);
      batch.dispose();
    }
    return ctx.newNumber(this.logsClosed || this.done ? 0 : Math.max(1, this.limits.outputBytes - this.logBytes));
  }

  /**
   * Reads the lines waiting in the log box (its `levels`, one character a line, and the texts at 0, 1, …) and
   * keeps them. Only property reads of the box, which the prelude made and no program can reach: no guest code
   * runs, so this works after a slice was stopped too. The guest empties the box after its own `hostLog()`.
   */
  private takeLogBox(): void {
    const ctx = this.context;
    const box = this.logBox;
    if (!ctx || !box?.alive) return;
    try {
      const levelsHandle = ctx.getProp(box, "levels");
      const levels = ctx.typeof(levelsHandle) === "string" ? ctx.getString(levelsHandle) : "";
      levelsHandle.dispose();
      if (levels === "") return;
      // Emptied here, in the same host call that read it, so an interrupt cannot make the lines be taken twice.
      const empty = ctx.newString("");
      ctx.setProp(box, "levels", empty);
      empty.dispose();
      const first = this.logs.length;
      for (let i = 0; i < levels.length; i++) {
        const textHandle = ctx.getProp(box, i);
        try {
          if (this.logsClosed) continue;
          const text = ctx.typeof(textHandle) === "string" ? this.readString(textHandle) : "";
          this.appendLog(LEVEL_OF_CHAR[levels[i] as string] ?? "log", text);
        } finally {
          textHandle.dispose();
        }
      }
      if (this.logs.length > first && this.host.onLogs) {
        try {
          this.host.onLogs(this.logs.slice(first));
        } catch {
          // A failing listener must not affect the run.
        }
      }
    } catch (error) {
      // A heap too full to copy a line out: what was kept stays kept; the run is failing for memory anyway.
      if (!(error instanceof SandboxMemoryError)) throw error;
    }
  }

  private appendLog(level: LogLevel, text: string): number {
    const cap = this.limits.outputBytes;
    // A line costs at least one byte, so empty lines cannot grow the record without bound.
    const bytes = Math.max(1, utf8Length(text));
    const left = cap - this.logBytes;
    if (bytes <= left) {
      this.keepLog({ level, text });
      this.logBytes += bytes;
      return Math.max(1, left - bytes);
    }
    if (left > 0) this.keepLog({ level, text: truncateUtf8(text, left) });
    this.logBytes = cap;
    this.logsClosed = true;
    this.keepLog({ level: "warn", text: `[log output truncated: more than ${cap} bytes]` });
    return 0;
  }

  private keepLog(line: LogLine): void {
    this.logs.push(line);
    try {
      this.host.onLog?.(line);
    } catch {
      // A failing listener must not affect the run.
    }
  }

  private onGuestOutput(kindHandle: QuickJSHandle, textHandle: QuickJSHandle): QuickJSHandle | undefined {
    const ctx = this.context as QuickJSContext;
    if (this.done || this.halt) return undefined;
    const kind = ctx.typeof(kindHandle) === "string" ? this.readString(kindHandle) : "";
    const text = ctx.typeof(textHandle) === "string" ? this.readString(textHandle) : "";
    const bytes = Math.max(1, utf8Length(text));
    if (this.outputBytes + bytes > this.limits.outputBytes) {
      this.halt = {
        reason: "OutputTooLarge",
        message: `text() and json() output is larger than ${this.limits.outputBytes} bytes`,
      };
      throw new Error("output limit reached");
    }
    this.outputBytes += bytes;
    if (kind === "json") this.output.push({ type: "json", value: JSON.parse(text) as unknown });
    else this.output.push({ type: "text", text });
    return undefined;
  }

  // Lazily compiled prelude parts ----------------------------------------------------------------

  /** Compiles one part of the prelude into the context; only the prelude's core holds this function. */
  private onGuestLoad(nameHandle: QuickJSHandle): QuickJSHandle {
    const ctx = this.context as QuickJSContext;
    const name = ctx.typeof(nameHandle) === "string" ? ctx.getString(nameHandle) : "";
    if (!Object.hasOwn(PRELUDE_PARTS, name)) throw new Error("unknown prelude part");
    const source = PRELUDE_PARTS[name as PreludePart];
    this.requireHeap(source.length);
    const result = ctx.evalCode(source, `${name}.js`, { type: "global", strict: true });
    // A failure (out of memory, stack overflow) is thrown into the guest as the handle it is.
    if (result.error) throw result.error;
    return result.value;
  }

  // Memory guards ---------------------------------------------------------------------------------

  /** `ctx.newString`, with large strings copied in by `encodeInto` (see `SandboxModule.copyUtf8`). */
  private newString(text: string): QuickJSHandle {
    const ctx = this.context as QuickJSContext;
    const inner = ctx as unknown as Partial<ContextInternals>;
    if (text.length < FAST_STRING_CHARS || !inner.ffi || !inner.memory || !inner.ctx) return ctx.newString(text);
    const pointer = this.module.copyUtf8(text);
    if (!pointer) return ctx.newString(text);
    try {
      return inner.memory.heapValueHandle(inner.ffi.QTS_NewString(inner.ctx.value, pointer));
    } finally {
      this.module.free(pointer);
    }
  }

  private stringLength(handle: QuickJSHandle): number {
    const ctx = this.context as QuickJSContext;
    const length = ctx.getProp(handle, "length");
    const n = ctx.typeof(length) === "number" ? ctx.getNumber(length) : 0;
    length.dispose();
    return n;
  }

  /** Reads a guest string, first making sure its UTF-8 copy fits in the sandbox heap. */
  private readString(handle: QuickJSHandle): string {
    const n = this.stringLength(handle);
    if (n > 4096 && !this.module.canAllocate(n * 3 + 64)) this.memoryExhausted();
    const text = (this.context as QuickJSContext).getString(handle);
    // The copy's allocation can still fail inside the sandbox; then the text comes back empty, never lost unsaid.
    if (text === "" && n > 0) this.memoryExhausted();
    return text;
  }

  /** Makes sure a host string of `chars` UTF-16 units can be copied in (UTF-8 buffer plus JS string). */
  private requireHeap(chars: number): void {
    if (!this.module.canAllocate(chars * 5 + 65536)) this.memoryExhausted();
  }

  private memoryExhausted(): never {
    this.halt ??= { reason: "Memory", message: this.memoryMessage() };
    throw new SandboxMemoryError("sandbox heap exhausted");
  }

  // Disposal --------------------------------------------------------------------------------------

  /**
   * Frees the attempt's runtime and context; called by the engine once the outcome is on its way (it is
   * ~0.1–0.3 ms, so it is kept off the caller's path), and always before the module's next run or preparation.
   */
  dispose(): void {
    if (this.corrupt) {
      this.program = this.bridge = this.takeOp = this.logBox = this.context = this.runtime = undefined;
      return;
    }
    try {
      this.program?.dispose();
      this.program = undefined;
      this.bridge?.dispose();
      this.bridge = undefined;
      this.takeOp?.dispose();
      this.takeOp = undefined;
      this.logBox?.dispose();
      this.logBox = undefined;
      this.context?.dispose();
      this.context = undefined;
      this.runtime?.dispose();
      this.runtime = undefined;
    } catch {
      evictModule(this.module);
    }
  }
}

/** One `<length>:<text>` frame of the prelude's taken calls at `at`, or undefined if malformed. */
function readFrame(text: string, at: number): { text: string; end: number } | undefined {
  const colon = text.indexOf(":", at);
  if (colon <= at || colon - at > 8) return undefined;
  const length = Number(text.slice(at, colon));
  const end = colon + 1 + length;
  if (!Number.isInteger(length) || length < 0 || end > text.length) return undefined;
  return { text: text.slice(colon + 1, end), end };
}

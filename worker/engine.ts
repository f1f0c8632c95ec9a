/**
 * The sandbox engine: runs one attempt of a Code Mode program in QuickJS (sync WASM build, promise-based
 * host functions) and answers with a `RunOutcome`; it never throws. Runtime-neutral: no Node or DOM
 * imports, so the browser Web Worker and the Node worker thread bundle this same file and behave the
 * same for the same input. Each run gets a fresh runtime and context inside a module whose fixed-size
 * memory is the `memoryMb` cap, and no other run in progress uses that module (runs at once in one thread
 * each take their own instance), so the cap is the run's alone; see run-session.ts for the run itself and
 * prelude.ts for the guest side.
 */
import type { EngineLimits, RunInput } from "../contracts/engine";
import { evictModule, moduleFor, type QuickJSBuild, type SandboxModule, setCompiledWasm } from "./quickjs-module";
import { type EngineHost, type EngineOutcome, type FreshContext, prepareContext, RunSession } from "./run-session";

export { canonicalJson } from "./canonical-json";
export type { EngineHost, EngineOutcome } from "./run-session";
export { callTakeCounts } from "./run-session";

export interface Engine {
  /** Runs one attempt; resolves with the outcome, never rejects. */
  run(input: RunInput, host: EngineHost): Promise<EngineOutcome>;
  /**
   * Prepares the next run's context now, synchronously, if no run is in progress (a worker calls it right
   * after posting an outcome, so a busy worker that never idles still starts each run from a prepared one).
   */
  prepareNext?(): void;
}

export interface LoadEngineOptions {
  /** Memory size whose module is loaded up front, so a failure to load shows at once. Default 64. */
  preloadMemoryMb?: number;
  /** The QuickJS .wasm already compiled (by the process that spawned this worker); see `setCompiledWasm`. */
  wasmModule?: WebAssembly.Module;
  /** Which build `wasmModule` is (default "stock"); see `QuickJSBuild`. */
  build?: QuickJSBuild;
}

/** Ranges from SPEC.md "API"; values outside are refused, not clamped. */
const LIMIT_RANGES: Record<keyof EngineLimits, [number, number]> = {
  timeoutMs: [1, 60_000],
  memoryMb: [1, 1024],
  outputBytes: [1, 10_485_760],
  maxPendingCalls: [1, 128],
};
/** Longest program source accepted. */
export const CODE_MAX_CHARS = 1 << 20;

/** Loads the QuickJS module (rejects if WebAssembly cannot load it) and returns the engine. */
export async function loadEngine(options: LoadEngineOptions = {}): Promise<Engine> {
  if (options.wasmModule) setCompiledWasm(options.wasmModule, options.build);
  lastModule = await moduleFor(options.preloadMemoryMb ?? 64);
  prepareSoon(lastModule);
  return { run: runProgram, prepareNext };
}

/** The module of the most recent run (or the preloaded one): the size the next run most likely needs. */
let lastModule: SandboxModule | undefined;

function prepareNext(): void {
  const module = lastModule;
  if (!module) return;
  const state = stateOf(module);
  disposeSpent(state);
  if (state.active > 0 || state.fresh.length > 0 || module.broken) return;
  prepareOne(module, state);
}

/** Adds one prepared context to the module's stock; false if none could be made (the heap is full, or it broke). */
function prepareOne(module: SandboxModule, state: ModuleState): boolean {
  try {
    const fresh = prepareContext(module);
    if (!fresh) return false;
    state.fresh.push(fresh);
    return true;
  } catch {
    evictModule(module);
    return false;
  }
}

/**
 * Per module: the fresh contexts prepared for its next runs (see `FreshContext`), the runs in progress, and
 * whether a preparation is scheduled. Contexts are prepared only while the module has no run, in a task of
 * their own after the last run ended (up to `STOCK`, ~0.6 ms each), so preparing never delays an outcome nor shares a heap
 * with a running program. Two are kept so that runs back to back (no idle task between them) still start
 * from prepared ones; a run that finds none (a longer burst, or another memory size) makes its own.
 */
interface ModuleState {
  fresh: FreshContext[];
  active: number;
  scheduled: boolean;
  /**
   * Sessions whose outcome was handed back but whose runtime is not yet freed: freeing takes ~0.1–0.3 ms, so it
   * happens after the outcome is on its way (`prepareNext`, a task of its own), and at the latest when the module's
   * next run or preparation starts, so a finished run's heap never counts against another's.
   */
  spent: RunSession[];
  disposing: boolean;
}
/** Prepared contexts kept per module (each a runtime, a context and the compiled core: ~0.2 MiB of its heap). */
const STOCK = 2;
const states = new WeakMap<SandboxModule, ModuleState>();
let preparedRuns = 0;

/** Finished runs whose runtime is not freed yet, over every module (for tests). */
export function spentRunCount(): number {
  return spentTotal;
}
let spentTotal = 0;

/** How many runs so far started from a context prepared while the engine was idle (for tests). */
export function preparedRunCount(): number {
  return preparedRuns;
}

function stateOf(module: SandboxModule): ModuleState {
  let state = states.get(module);
  if (!state) {
    state = { fresh: [], active: 0, scheduled: false, spent: [], disposing: false };
    states.set(module, state);
  }
  return state;
}

function prepareSoon(module: SandboxModule): void {
  const state = stateOf(module);
  if (state.scheduled || state.fresh.length >= STOCK || module.broken) return;
  state.scheduled = true;
  setTimeout(() => {
    state.scheduled = false;
    disposeSpent(state);
    while (state.active === 0 && state.fresh.length < STOCK && !module.broken) {
      if (!prepareOne(module, state)) return;
    }
  }, 0);
}

async function runProgram(input: RunInput, host: EngineHost): Promise<EngineOutcome> {
  const problem = checkInput(input);
  if (problem) return unavailable(`invalid run input: ${problem}`);
  let module: SandboxModule;
  try {
    // Claimed (state.active) synchronously after the await: a run that was handed an instance another run
    // claimed meanwhile asks again, and gets another.
    do module = await moduleFor(input.limits.memoryMb, inUse);
    while (module.broken || inUse(module));
  } catch {
    return unavailable("the sandbox runtime could not be loaded");
  }
  lastModule = module;
  const state = stateOf(module);
  disposeSpent(state);
  const fresh = module.broken ? undefined : state.fresh.shift();
  if (fresh) preparedRuns += 1;
  state.active += 1;
  const session = new RunSession(module, input, host, fresh);
  try {
    return await session.run();
  } catch {
    return unavailable("the sandbox failed");
  } finally {
    state.active -= 1;
    state.spent.push(session);
    spentTotal += 1;
    disposeSoon(state);
    prepareSoon(module);
  }
}

/** A run in progress holds the module. */
function inUse(module: SandboxModule): boolean {
  return stateOf(module).active > 0;
}

function disposeSpent(state: ModuleState): void {
  for (const session of state.spent.splice(0)) {
    spentTotal -= 1;
    session.dispose();
  }
}

/** Frees spent sessions in a task of their own, after the caller has its outcome. */
function disposeSoon(state: ModuleState): void {
  if (state.disposing) return;
  state.disposing = true;
  setTimeout(() => {
    state.disposing = false;
    disposeSpent(state);
  }, 0);
}

function unavailable(message: string): EngineOutcome {
  return { status: "failed", reason: "Unavailable", message, logs: [], output: [], completionOrder: [] };
}

/** A reason the input cannot be run, or undefined. Input may arrive over postMessage: check everything. */
export function checkInput(input: RunInput): string | undefined {
  if (typeof input !== "object" || input === null) return "not an object";
  if (typeof input.code !== "string") return "code must be a string";
  if (input.code.length > CODE_MAX_CHARS) return `code is longer than ${CODE_MAX_CHARS} characters`;
  if (!Number.isFinite(input.time)) return "time must be a finite number";
  if (!Number.isFinite(input.seed)) return "seed must be a finite number";
  if (!isStringList(input.bindings)) return "bindings must be a list of strings";
  if (!isStringList(input.vaultNames)) return "vaultNames must be a list of strings";
  const limits = input.limits as Partial<EngineLimits> | undefined;
  if (typeof limits !== "object" || limits === null) return "limits are missing";
  for (const [key, [min, max]] of Object.entries(LIMIT_RANGES) as [keyof EngineLimits, [number, number]][]) {
    const value = limits[key];
    if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max) {
      return `limits.${key} must be between ${min} and ${max}`;
    }
  }
  const replay = input.replay;
  if (replay !== undefined) {
    if (typeof replay !== "object" || replay === null || !Array.isArray(replay.calls))
      return "replay.calls must be a list";
    if (!Array.isArray(replay.completionOrder)) return "replay.completionOrder must be a list";
    for (const call of replay.calls) {
      if (typeof call !== "object" || call === null) return "replay.calls has a non-object";
      if (!Number.isInteger(call.index) || typeof call.binding !== "string" || typeof call.argsJson !== "string") {
        return "replay.calls entries need index, binding and argsJson";
      }
      const outcome = call.outcome as { type?: unknown } | undefined;
      if (!outcome || (outcome.type !== "ok" && outcome.type !== "error"))
        return "replay.calls entries need an outcome";
    }
  }
  return undefined;
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}

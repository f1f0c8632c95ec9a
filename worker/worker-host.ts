/**
 * The worker side of contracts/worker-protocol.ts, shared by the browser Web Worker and the Node worker
 * thread: loads the engine once, answers "ready" (with `error` at once if it could not load), runs the
 * programs the driver sends (several at once when it packs them: each in its own module, engine.ts), forwards their calls (all the calls of one guest slice in one "calls" message), logs and
 * busy/idle changes to the driver (into the run's shared busy meter when it sent one, else as "busy"
 * messages), and resolves calls with the driver's answers (which arrive batched the same way).
 * Right after posting the outcome of its last run in progress it prepares the next run's context, so that cost stays off the next start. Messages for another nonce are ignored. Runtime-neutral: the two entry files only adapt postMessage.
 */
import type { CallRequest, HostCallAnswer } from "../contracts/engine";
import { isToWorker, type ToWorker } from "../contracts/worker-protocol";
import { meterCancelled, meterWaited, meterWriter } from "./busy-meter";
import { type Engine, loadEngine } from "./engine";
import type { WorkerMessage } from "./ready";

export type { WorkerMessage } from "./ready";

export interface WorkerIo {
  post(message: WorkerMessage): void;
  onMessage(listener: (message: unknown) => void): void;
}

interface ActiveRun {
  nonce: string;
  answers: Map<number, (answer: HostCallAnswer) => void>;
  controller: AbortController;
  /** Calls issued since the last "calls" message; posted together once the current slice returns. */
  outbox: CallRequest[];
}

/**
 * Serves runs on `io`; `load` is the engine loader (tests substitute a failing one); `threadCpuMs` is this
 * thread's CPU clock where the host has one (the time limit then does not count waiting for a core).
 */
export function serveEngine(io: WorkerIo, load: () => Promise<Engine> = loadEngine, threadCpuMs?: () => number): void {
  let engine: Engine | undefined;
  const active = new Map<string, ActiveRun>();
  const waiting: ToWorker[] = [];

  const handle = (message: ToWorker): void => {
    if (message.type === "run") {
      if (active.has(message.nonce)) return; // the driver's nonces are unique: a repeat is no new run
      if (!engine) {
        io.post({
          type: "done",
          nonce: message.nonce,
          outcome: {
            status: "failed",
            reason: "Unavailable",
            message: "the sandbox did not load",
            logs: [],
            output: [],
          },
        });
        return;
      }
      start(engine, message.nonce, message);
    } else if (message.type === "answers") {
      const run = active.get(message.nonce);
      if (!run || !Array.isArray(message.answers)) return;
      for (const item of message.answers) {
        if (typeof item !== "object" || item === null) continue;
        const resolve = run.answers.get(item.index);
        run.answers.delete(item.index);
        resolve?.(item.answer);
      }
    } else {
      active.get(message.nonce)?.controller.abort();
    }
  };

  const start = (loaded: Engine, nonce: string, message: Extract<ToWorker, { type: "run" }>): void => {
    const run: ActiveRun = { nonce, answers: new Map(), controller: new AbortController(), outbox: [] };
    active.set(nonce, run);
    const flush = (): void => {
      io.post({ type: "calls", nonce, calls: run.outbox.splice(0) });
    };
    void loaded
      .run(message.input, {
        call: (call) =>
          new Promise<HostCallAnswer>((resolve) => {
            run.answers.set(call.index, resolve);
            if (run.outbox.push(call) === 1) queueMicrotask(flush);
          }),
        // A take's lines go out at once, in one message: a long slice does not hold them back.
        onLogs: (lines) => io.post({ type: "logs", nonce, lines }),
        onBusy: meterWriter(message.meter) ?? ((busy) => io.post({ type: "busy", nonce, busy })),
        signal: run.controller.signal,
        cancelled: meterCancelled(message.meter),
        threadCpuMs,
        onWaited: meterWaited(message.meter),
      })
      .then((outcome) => {
        active.delete(nonce);
        io.post({ type: "done", nonce, outcome });
        if (active.size === 0) loaded.prepareNext?.();
      });
  };

  let settled = false;
  io.onMessage((message) => {
    if (!isToWorker(message)) return;
    if (settled) handle(message);
    else waiting.push(message);
  });

  let loading: Promise<Engine>;
  try {
    loading = load();
  } catch (error) {
    loading = Promise.reject(error);
  }
  loading.then(
    (loaded) => {
      engine = loaded;
      settled = true;
      io.post({ type: "ready" });
      for (const message of waiting.splice(0)) handle(message);
    },
    (error: unknown) => {
      const detail = error instanceof Error && error.message ? `: ${error.message.slice(0, 500)}` : "";
      settled = true;
      io.post({ type: "ready", error: `the sandbox engine could not be loaded${detail}` });
      for (const message of waiting.splice(0)) handle(message);
    },
  );
}

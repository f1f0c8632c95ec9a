"use client";
/**
 * Runs a program in the page's Web Worker. The server creates the run and hands back its ticket (code,
 * time, seed, limits, bindings, replay log); the worker runs it, and every nested call goes to the
 * server over tRPC, which alone decides and records. The end of the attempt goes back to the server.
 */
import type { TRPCClient } from "@trpc/client";
import { type CodeRunRecord, PAGE_HOST_BEAT_MS, type RunTicket, type StartRunInput } from "@/contracts/code-run";
import type { HostCallAnswer, LogLine, RunOutcome } from "@/contracts/engine";
import type { AppRouter } from "@/server/api/root";
import { compileSandboxWasm, spawnBrowserWorker } from "@/worker/browser-port";
import { SandboxSupervisor } from "@/worker/supervisor";
import { sendFinish } from "./outbox";

// A page that can run programs fetches and compiles the sandbox's .wasm once it is idle, so its first run
// does not wait for that (the workers it spawns later share the compiled module; see browser-port.ts).
if (typeof window !== "undefined" && typeof WebAssembly === "object") {
  const whenIdle = window.requestIdleCallback ?? ((task: () => void) => window.setTimeout(task, 200));
  whenIdle(() => void compileSandboxWasm());
}

let supervisor: SandboxSupervisor | undefined;

function getSupervisor(): SandboxSupervisor {
  supervisor ??= new SandboxSupervisor({ spawn: spawnBrowserWorker });
  return supervisor;
}

export interface BrowserRunHandlers {
  onStarted?(record: CodeRunRecord): void;
  onLog?(line: LogLine): void;
  signal?: AbortSignal;
}

export async function runInBrowser(
  client: TRPCClient<AppRouter>,
  input: StartRunInput,
  handlers: BrowserRunHandlers = {},
): Promise<CodeRunRecord> {
  const { ticket, record } = await client.codeRuns.start.mutate(input);
  handlers.onStarted?.(record);
  if (!ticket) return record;
  return runTicketInBrowser(client, ticket, handlers);
}

/** Runs an attempt the server handed out (a manual run, or a turn's program this page claimed). */
export async function runTicketInBrowser(
  client: TRPCClient<AppRouter>,
  ticket: RunTicket,
  handlers: BrowserRunHandlers = {},
): Promise<CodeRunRecord> {
  // This page's lease on the attempt (sweep.ts): renewed while the program runs, so a closed or reloaded
  // tab's run is taken over by the server soon, and a live one is never.
  const beat = window.setInterval(() => {
    client.codeRuns.hostAlive.mutate({ runId: ticket.runId, attempt: ticket.attempt }).catch(() => undefined);
  }, PAGE_HOST_BEAT_MS);
  let outcome: RunOutcome;
  try {
    outcome = await getSupervisor().run(ticket.input, {
      call: (req) =>
        client.codeRuns.appCall
          .mutate({ runId: ticket.runId, attempt: ticket.attempt, ...req })
          .then((answer) => answer as HostCallAnswer)
          .catch(
            (error: unknown): HostCallAnswer => ({
              type: "stop",
              reason: "Unavailable",
              message: `The server did not take the call: ${error instanceof Error ? error.message : String(error)}`,
            }),
          ),
      onLog: handlers.onLog,
      signal: handlers.signal,
    });
  } finally {
    window.clearInterval(beat);
  }
  return sendFinish(client, ticket.runId, ticket.attempt, outcome);
}

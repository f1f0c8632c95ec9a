/**
 * Shared fixtures for the engine tests: default limits, a run input builder, the seed calendar data and a
 * fake host that records calls, plus a one-time build of the Node worker bundle for worker-thread tests.
 */
import { execFileSync } from "node:child_process";
import path from "node:path";
import type { CallOutcome, CallRequest, EngineLimits, HostCallAnswer, RunInput } from "@/contracts/engine";
import { type Engine, type EngineHost, loadEngine } from "@/worker/engine";
import { threadCpuClock } from "@/worker/thread-clock";

export const LIMITS: EngineLimits = { timeoutMs: 2000, memoryMb: 32, outputBytes: 65536, maxPendingCalls: 16 };
export const TIME = Date.UTC(2026, 9, 23, 9, 30);

export type InputExtra = Omit<Partial<RunInput>, "limits"> & { limits?: Partial<EngineLimits> };

export function input(code: string, extra: InputExtra = {}): RunInput {
  const { limits, ...rest } = extra;
  return {
    code,
    time: TIME,
    seed: 7,
    bindings: ["work_calendar.list_events", "work_calendar.create_event", "notes.read_note"],
    vaultNames: ["github/token"],
    ...rest,
    limits: { ...LIMITS, ...limits },
  };
}

export const EVENTS: Record<string, { id: string; title: string; attendees: number }[]> = {
  "2026-10-23": [
    { id: "e1", title: "Standup", attendees: 6 },
    { id: "e2", title: "Quarterly review", attendees: 25 },
  ],
  "2026-10-24": [
    { id: "e3", title: "Offsite planning", attendees: 14 },
    { id: "e4", title: "1:1", attendees: 2 },
  ],
};

export { CALENDAR_PROGRAM } from "@/contracts/example-programs.mjs";

export function calendarOutcome(req: CallRequest): CallOutcome {
  if (req.binding === "work_calendar.list_events") {
    const { day } = JSON.parse(req.argsJson) as { day: string };
    const events = EVENTS[day] ?? [];
    return { type: "ok", resultJson: JSON.stringify({ content: [], structuredContent: { events } }) };
  }
  if (req.binding === "notes.read_note") {
    return { type: "error", name: "AppCallDenied", message: "denied by policy", details: { policy: "deny" } };
  }
  return { type: "ok", resultJson: JSON.stringify({ content: [{ type: "text", text: "ok" }] }) };
}

/** A host that answers from `answer` (default: the calendar) and records every request. */
/**
 * This thread's CPU clock (Linux), which fake hosts hand the engine as the server's worker threads do: a
 * trivial program on a machine so busy that this thread waits seconds for a core is not failed `Timeout`
 * by the wall clock (seen on a loaded CI machine: five `typeof`s "ran longer than 2000 ms").
 */
const cpuClock = threadCpuClock();

export function fakeHost(answer: (req: CallRequest) => HostCallAnswer | Promise<HostCallAnswer> = calendarOutcome) {
  const calls: CallRequest[] = [];
  const host: EngineHost & { calls: CallRequest[] } = {
    calls,
    ...(cpuClock ? { threadCpuMs: cpuClock } : {}),
    call: async (req) => {
      calls.push(req);
      return answer(req);
    },
  };
  return host;
}

let engine: Promise<Engine> | undefined;
export function getEngine(): Promise<Engine> {
  engine ??= loadEngine({ preloadMemoryMb: LIMITS.memoryMb });
  return engine;
}

let built = false;
/** Builds dist/worker/node-worker.mjs once per test process. */
export function buildWorkerBundle(): void {
  if (built) return;
  execFileSync(process.execPath, [path.join(process.cwd(), "scripts/build-worker.mjs")], { stdio: "pipe" });
  built = true;
}

export function parseValue(outcome: { status: string; valueJson?: string }): unknown {
  if (outcome.status !== "completed" || outcome.valueJson === undefined) {
    throw new Error(`expected a completed run, got ${JSON.stringify(outcome)}`);
  }
  return JSON.parse(outcome.valueJson);
}

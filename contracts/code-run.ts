/**
 * The code-run record as the API returns it (SPEC.md "API" → Record; seed 001), and the inputs that
 * start a run. Shared by server, page and tests.
 */
import { z } from "zod";
import { FAILURE_REASONS, type FailureReason, type LogLine, type OutputItem, type RunInput } from "./engine";
import type { UnknownState } from "./reconcile";
import { CODE_MODE_RANGES } from "./settings";
import { idField, onlyFields } from "./text";

export { idField };

/** `Queued`: a server-side run waiting for a free slot (codeMode.maxServerRuns / maxServerRunsPerUser). */
export const CODE_RUN_STATUSES = ["Queued", "Running", "Waiting", "Completed", "Failed", "Cancelled"] as const;
export type CodeRunStatus = (typeof CODE_RUN_STATUSES)[number];
/** The statuses of a run that has not ended yet (its ending is still to be settled). */
export const LIVE_RUN_STATUSES = ["Queued", "Running", "Waiting"] as const satisfies readonly CodeRunStatus[];
/** `LIVE_RUN_STATUSES` as an SQL list, for `status in ${LIVE_RUN_STATUSES_SQL}` (constants only, no input). */
export const LIVE_RUN_STATUSES_SQL = `(${LIVE_RUN_STATUSES.map((s) => `'${s}'`).join(", ")})`;
/** Whether a run in this status has not ended yet. */
export function isLiveRunStatus(status: string | undefined): boolean {
  return (LIVE_RUN_STATUSES as readonly string[]).includes(status ?? "");
}

export const startRunInput = onlyFields(
  {
    chatId: idField("chatId"),
    code: z
      .string({ error: (issue) => (issue.input === undefined ? "code is required" : "code must be a string") })
      .min(1, "code must not be empty")
      .max(200_000, "code must be at most 200000 characters"),
    reason: z
      .string({ error: "reason must be a string" })
      .max(2000, "reason must be at most 2000 characters")
      .default(""),
    language: z
      .enum(["javascript", "typescript"], { error: 'language must be "javascript" or "typescript"' })
      .default("javascript"),
  },
  // A misspelt field would otherwise be dropped: "langauge": "typescript" would run TypeScript as JavaScript.
  "a run takes code, reason and language",
);
export type StartRunInput = z.input<typeof startRunInput>;

/** Longest argument JSON a page may send for one call (the server refuses larger ones). */
export const CALL_ARGS_MAX_CHARS = 8 * 1024 * 1024;
/** Largest outputBytes any run can have: the static bound on what a host reports at its end. */
const OUTPUT_MAX = CODE_MODE_RANGES.outputBytes.max;
/** Longest failure message a host may report (the engine keeps program errors to 4000 characters). */
export const FAILURE_MESSAGE_MAX_CHARS = 8000;
/** Call indexes are stored as 32-bit integers. */
const callIndex = z.number().int().min(0).max(2_147_483_647);

/**
 * A page that hosts a run's attempt says so every PAGE_HOST_BEAT_MS (`codeRuns.hostAlive`) while its
 * program runs; an attempt of a page not heard of for PAGE_HOST_LEASE_MS is taken over by the server
 * (sweep.ts), so a closed or reloaded tab's run goes on within ~25 s (the sweep runs every 5 s).
 */
export const PAGE_HOST_BEAT_MS = 5_000;
export const PAGE_HOST_LEASE_MS = 20_000;

/** A page's word that it still hosts an attempt (`codeRuns.hostAlive`). */
export const hostAliveInput = z.object({ runId: idField("runId"), attempt: z.number().int().min(1) });

/** One nested call from a page's worker (`codeRuns.appCall`). */
export const appCallInput = z.object({
  runId: idField("runId"),
  attempt: z.number().int().min(1),
  index: callIndex,
  binding: z.string().max(300),
  argsJson: z.string().max(CALL_ARGS_MAX_CHARS, `argsJson must be at most ${CALL_ARGS_MAX_CHARS} characters`),
});

const logLine = z.object({ level: z.enum(["log", "info", "warn", "error"]), text: z.string().max(OUTPUT_MAX) });
const outputItem = z.union([
  z.object({ type: z.literal("text"), text: z.string().max(OUTPUT_MAX) }),
  z.object({ type: z.literal("json"), value: z.unknown().optional() }),
]);
/*
 * Static bounds (what any run could report); finishRun then checks each list against what this run can
 * have: its call count and its own outputBytes.
 */
const logs = z.array(logLine).max(OUTPUT_MAX + 1, `logs must have at most ${OUTPUT_MAX + 1} lines`);
const output = z.array(outputItem).max(OUTPUT_MAX, `output must have at most ${OUTPUT_MAX} items`);
/** The order in which call outcomes reached the program: what a re-run replays. */
const completionOrder = z.array(callIndex).max(100_000, "completionOrder must have at most 100000 entries").optional();
const message = z
  .string()
  .max(FAILURE_MESSAGE_MAX_CHARS, `message must be at most ${FAILURE_MESSAGE_MAX_CHARS} characters`);
export const runOutcomeInput = z.discriminatedUnion("status", [
  z.object({
    status: z.literal("completed"),
    valueJson: z.string().max(OUTPUT_MAX, `valueJson must be at most ${OUTPUT_MAX} characters`),
    logs,
    output,
    completionOrder,
  }),
  z.object({ status: z.literal("failed"), reason: z.enum(FAILURE_REASONS), message, logs, output, completionOrder }),
  z.object({ status: z.literal("waiting"), index: callIndex, logs, output, completionOrder }),
]);
/** The end of an attempt as its page host reports it (`codeRuns.finish`). */
export const finishRunInput = z.object({
  runId: idField("runId"),
  attempt: z.number().int().min(1),
  outcome: runOutcomeInput,
});

export interface AppOperationView {
  id: string;
  executionId: string;
  /** `Task`: the App runs the call as a task (MCP Tasks); `task` says how far it is. `InputAnswered`: a parked question was answered, its retry not sent yet. */
  status: "Running" | "Completed" | "Failed" | "Unknown" | "InputRequired" | "InputAnswered" | "Task";
  /** The stored MCP result (or the failure's safe details); null while running. Always present. */
  result?: unknown;
  /** The last `notifications/progress` the App reported for this call (message is the App's text), if any. */
  progress?: { progress: number; total?: number; message?: string } | null;
  /** The App's task for this call, as last polled (statusMessage is the App's text), if it ran as one. */
  task?: {
    id: string;
    status: "working" | "input_required" | "completed" | "failed" | "cancelled";
    statusMessage: string | null;
  } | null;
  startedAt: number;
  finishedAt: number | null;
}

export interface CodeRunCallView {
  index: number;
  binding: string;
  source: { connectionId: string; connectionName: string; name: string };
  /** The arguments the program passed (vault references stay references). */
  arguments?: unknown;
  app: AppOperationView | null;
  rejection: { name: string; message: string } | null;
  /** The remembered grant that allowed it without asking, if one did. */
  grantId?: string | null;
  /** How a call whose outcome was Unknown was reconciled (who and when, for a person's choice). */
  unknown?: { state: UnknownState; by: string | null; at: number | null } | null;
  /** Who let the call go or refused it, and when: a person, or the grant that allowed it; null if nobody decided. */
  decision: CallDecision | null;
}

export interface CallDecision {
  by: { id: string; name: string } | { grant: string };
  at: number;
}

export type CodeRunResult =
  | {
      _tag: "Completed" /** Always present (JSON null included). */;
      value?: unknown;
      logs: LogLine[];
      output: OutputItem[];
    }
  | { _tag: "Failed"; reason: FailureReason; errorId: string; message: string; logs: LogLine[] };

export interface CodeRunRecord {
  id: string;
  executionId: string;
  chat: string;
  /** Alias of `chat` (seed 000 called chats sessions). */
  session: string;
  turn: string | null;
  callId: string | null;
  status: CodeRunStatus;
  language: "javascript" | "typescript";
  code: string;
  reason: string;
  calls: CodeRunCallView[];
  result: CodeRunResult | null;
  createdAt: number;
  updatedAt: number;
}

/** What a host (page worker or server runner) is handed to run one attempt. */
export interface RunTicket {
  runId: string;
  attempt: number;
  input: RunInput;
}

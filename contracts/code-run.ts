/**
 * The code-run record as the API returns it (SPEC.md "API" → Record; seed 001), and the inputs that
 * start a run. Shared by server, page and tests.
 */
import { z } from "zod";
import type { FailureReason, LogLine, OutputItem, RunInput } from "./engine";

export const CODE_RUN_STATUSES = ["Running", "Waiting", "Completed", "Failed", "Cancelled"] as const;
export type CodeRunStatus = (typeof CODE_RUN_STATUSES)[number];

export const startRunInput = z.object({
  chatId: z.string().min(1, "chatId is required"),
  code: z.string({ error: "code must be a string" }).min(1, "code must not be empty").max(200_000, "code must be at most 200000 characters"),
  reason: z.string({ error: "reason must be a string" }).max(2000, "reason must be at most 2000 characters").default(""),
  language: z.enum(["javascript", "typescript"], { error: 'language must be "javascript" or "typescript"' }).default("javascript"),
});
export type StartRunInput = z.input<typeof startRunInput>;

export interface AppOperationView {
  id: string;
  executionId: string;
  status: "Running" | "Completed" | "Failed" | "Unknown" | "InputRequired";
  /** The stored MCP result (or the failure's safe details); null while running. Always present. */
  result?: unknown;
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
}

export type CodeRunResult =
  | { _tag: "Completed"; /** Always present (JSON null included). */ value?: unknown; logs: LogLine[]; output: OutputItem[] }
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

/**
 * The tools a turn offers the model: openbot_code_api and openbot_run_code (when Code Mode is on and
 * there are Apps) beside each App tool called directly, which passes the very same capability check. In
 * the web chat a program runs in the page's worker (the page claims the published ticket); with no page
 * the server runner runs it. What the model gets back is `runToolResult`.
 */
import "server-only";
import { jsonSchema, type ToolSet, tool } from "ai";
import { z } from "zod";
import type { CodeRunRecord } from "@/contracts/code-run";
import type { CodeModeSettings } from "@/contracts/settings";
import { canonicalJson } from "@/worker/canonical-json";
import { declarations } from "../../apps/declarations";
import type { ToolEntry } from "../../apps/registry";
import type { Platform } from "../../platform";
import { checkCall, performAppCall } from "../app-calls";
import { requireAuth } from "../auth";
import { getRun } from "../code-runs/records";
import { cancelRun, claimRun, runTicketOnServer, startRun } from "../code-runs/runs";
import type { ServiceContext } from "../context";
import { requestDecision } from "../decisions";
import { CODE_API_DESCRIPTION, CODE_API_TOOL, RUN_CODE_TOOL, runCodeDescription } from "./prompt";
import { emitTurnEvent } from "./turn-feed";

/** How long the loop waits for a page to claim a program before the server runner runs it. */
const CLAIM_WAIT_MS = 4_000;
const ENDED: ReadonlySet<string> = new Set(["Completed", "Failed", "Cancelled"]);

/** Where the tools run: the turn, and whether a page may run its programs. */
interface TurnPlace {
  chatId: string;
  turnId: string;
  host: "browser" | "server";
  signal: AbortSignal;
}

/** The turn's tool set, built from the Apps connected now. */
export function turnTools(ctx: ServiceContext, codeMode: CodeModeSettings, place: TurnPlace): ToolSet {
  const apps = ctx.platform.apps.tools();
  const tools: ToolSet = {};
  if (codeMode.enabled && apps.length > 0) {
    tools[CODE_API_TOOL] = tool({
      description: CODE_API_DESCRIPTION,
      inputSchema: z.object({ query: z.string().optional(), connection: z.string().optional() }),
      execute: async ({ query, connection }) => ({
        declarations: await declarations(ctx.platform.apps.tools(), { query, connection }),
      }),
    });
    tools[RUN_CODE_TOOL] = tool({
      description: runCodeDescription(apps, codeMode),
      inputSchema: z.object({
        code: z.string().describe("The program: the body of an async function."),
        reason: z.string().describe("What the program is for, in a short sentence."),
        language: z.enum(["javascript", "typescript"]).optional(),
      }),
      execute: async (args, { toolCallId }) => runProgramForTurn(ctx, place, toolCallId, args),
    });
  }
  for (const entry of apps) {
    tools[directName(entry)] = tool({
      description: `App ${JSON.stringify(entry.connectionName)}, tool ${JSON.stringify(entry.name)}.`,
      inputSchema: jsonSchema(entry.inputSchema as Parameters<typeof jsonSchema>[0]),
      execute: async (args, { toolCallId }) => callToolDirectly(ctx, place, toolCallId, entry, args),
    });
  }
  return tools;
}

/** Direct tool names: `<app>__<tool>` (providers allow [A-Za-z0-9_-]{1,64}). */
const directName = (entry: ToolEntry) => entry.binding.replace(".", "__").slice(0, 64);

/** What the model gets back from openbot_run_code. */
export function runToolResult(record: CodeRunRecord): Record<string, unknown> {
  const calls = record.calls.map((c) => ({
    binding: c.binding,
    status: c.rejection?.name ?? c.app?.status ?? "NotStarted",
  }));
  if (record.status === "Waiting") {
    return {
      status: "waiting",
      runId: record.id,
      message:
        "The program is waiting for a person's decision. Its result will be posted into the chat when it completes; do not run it again.",
      calls,
    };
  }
  if (record.result?._tag === "Completed") {
    return {
      status: "completed",
      runId: record.id,
      value: record.result.value ?? null,
      logs: record.result.logs,
      output: record.result.output,
      calls,
    };
  }
  const failed = record.result?._tag === "Failed" ? record.result : null;
  return {
    status: "failed",
    runId: record.id,
    reason: failed?.reason ?? record.status,
    message: failed?.message ?? "",
    logs: failed?.logs ?? [],
    calls,
  };
}

async function runProgramForTurn(
  ctx: ServiceContext,
  { chatId, turnId, host, signal }: TurnPlace,
  toolCallId: string,
  args: { code: string; reason: string; language?: "javascript" | "typescript" },
): Promise<Record<string, unknown>> {
  const { ticket, record } = await startRun(
    ctx,
    { chatId, code: args.code, reason: args.reason, language: args.language ?? "javascript" },
    host,
    { turnId, callId: toolCallId },
  );
  if (!ticket) return runToolResult(record);
  const { platform } = ctx;
  const onAbort = () => void cancelRun(ctx, ticket.runId).catch(() => undefined);
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    let claimedByPage = false;
    // A page of the person whose run it is (only they may host it, runForHost).
    if (host === "browser" && (await platform.cluster.pagePresent(chatId, requireAuth(ctx.principal).userId))) {
      emitTurnEvent(platform, chatId, { type: "run-request", turnId, runId: ticket.runId, attempt: ticket.attempt });
      claimedByPage = await waitFor(platform, ticket.runId, CLAIM_WAIT_MS, signal, async () => {
        const row = (
          await platform.db.query<{ claimed_at: string | null }>("select claimed_at from code_runs where id = $1", [
            ticket.runId,
          ])
        )[0];
        return row?.claimed_at != null;
      });
    }
    if (claimedByPage) {
      await waitFor(platform, ticket.runId, Number.POSITIVE_INFINITY, signal, async () => {
        const row = (
          await platform.db.query<{ status: string }>("select status from code_runs where id = $1", [ticket.runId])
        )[0];
        return row?.status !== "Running";
      });
    } else if (await claimRun(platform, ticket.runId, ticket.attempt)) {
      await runTicketOnServer(ctx, ticket, "bounded");
    }
    const final = await getRun(ctx, ticket.runId);
    // Decisions taken while the attempt still ran re-run it at once: still going, so its result comes later.
    const ended = ENDED.has(final.status);
    if (ended) {
      await platform.db.query("update code_runs set reported = true where id = $1", [ticket.runId]);
      return runToolResult(final);
    }
    // The turn moves on: the run's end is posted into the chat when it comes (reportRunIfLate). A run that
    // ended since `getRun` may have found the mark unset; then whoever claims `reported` first carries it.
    const [now] = await platform.db.query<{ status: string }>(
      "update code_runs set turn_waiting = true where id = $1 returning status",
      [ticket.runId],
    );
    if (now && ENDED.has(now.status)) {
      const claimed = await platform.db.query(
        "update code_runs set reported = true where id = $1 and reported = false returning id",
        [ticket.runId],
      );
      if (claimed.length > 0) return runToolResult(await getRun(ctx, ticket.runId));
    }
    return runToolResult({ ...final, status: "Waiting" });
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

/** Waits until `check` is true, re-checking on each change of the run and every second. */
async function waitFor(
  platform: Platform,
  runId: string,
  timeoutMs: number,
  signal: AbortSignal,
  check: () => Promise<boolean>,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!signal.aborted) {
    if (await check()) return true;
    const left = deadline - Date.now();
    if (left <= 0) return false;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        platform.events.off("run", onRun);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const onRun = (e: { runId: string | null }) => e.runId === runId && done();
      const timer = setTimeout(done, Math.min(left, 1_000));
      platform.events.on("run", onRun);
      signal.addEventListener("abort", done, { once: true });
    });
  }
  return false;
}

/** A normal App tool call from the model: the same capability check, an App operation like any other. */
async function callToolDirectly(
  ctx: ServiceContext,
  { chatId }: TurnPlace,
  toolCallId: string,
  entry: ToolEntry,
  args: unknown,
) {
  const principal = requireAuth(ctx.principal);
  const argsJson = canonicalJson(JSON.stringify(args ?? {}));
  // The chat's remembered grants (and those to everyone) apply to the model's own calls too.
  const check = await checkCall(ctx.platform, principal, entry, argsJson, { runId: null, chatId, index: null });
  if (check.verdict === "refuse") return { error: { name: check.outcome.name, message: check.outcome.message } };
  if (check.verdict === "ask") {
    const decisionId = await requestDecision(ctx.platform, {
      chatId,
      runId: null,
      index: null,
      toolCallId,
      callId: toolCallId,
      entry,
      argsJson,
      capability: check.capability,
      code: "",
      requestedByKey: principal.keyId,
    });
    return {
      status: "waiting",
      decisionId,
      message: "This call needs a person's decision; its result will be posted into the chat.",
    };
  }
  const { outcome } = await performAppCall(ctx.platform, {
    chatId,
    runId: null,
    index: null,
    entry,
    argsJson,
    principal,
  });
  return outcome.type === "ok"
    ? (JSON.parse(outcome.resultJson) as unknown)
    : { error: { name: outcome.name, message: outcome.message, details: outcome.details } };
}

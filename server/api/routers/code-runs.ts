import "server-only";
import { on } from "node:events";
import { z } from "zod";
import { appCallInput, finishRunInput, idField } from "@/contracts/code-run";
import { readableChat } from "../../services/chats";
import { handleCall } from "../../services/code-runs/calls";
import { finishRun } from "../../services/code-runs/journal";
import { reconcileCall } from "../../services/code-runs/reconcile";
import { getRun, listRuns } from "../../services/code-runs/records";
import { cancelRun, claimForPage, runOnServer, startRun } from "../../services/code-runs/runs";
import { createTRPCRouter, publicProcedure } from "../trpc";

export const codeRunsRouter = createTRPCRouter({
  /** A person's answer to a call whose outcome is Unknown: Mark as done or Send again. */
  reconcile: publicProcedure
    .input(
      z.object({
        runId: idField("runId"),
        index: z.number().int().min(0),
        action: z.unknown().optional(),
        result: z.unknown().optional(),
      }),
    )
    .mutation(({ ctx, input }) =>
      reconcileCall(ctx, input.runId, input.index, {
        action: input.action,
        ...(input.result === undefined ? {} : { result: input.result }),
      }),
    ),
  /** Starts a run for the page's worker: the record plus the ticket the worker runs. */
  start: publicProcedure.input(z.unknown()).mutation(({ ctx, input }) => startRun(ctx, input, "browser")),
  /** One nested call from a running program. */
  appCall: publicProcedure.input(appCallInput).mutation(({ ctx, input }) =>
    handleCall(ctx, input.runId, input.attempt, {
      index: input.index,
      binding: input.binding,
      argsJson: input.argsJson,
    }),
  ),
  finish: publicProcedure
    .input(finishRunInput)
    .mutation(({ ctx, input }) => finishRun(ctx, input.runId, input.attempt, input.outcome)),
  /** A page takes a turn's program to run in its worker; null when another host has it. */
  claim: publicProcedure
    .input(z.object({ runId: idField("runId"), attempt: z.number().int().min(1) }))
    .mutation(({ ctx, input }) => claimForPage(ctx, input.runId, input.attempt)),
  /** Runs a program on the server runner (no browser). */
  runOnServer: publicProcedure.input(z.unknown()).mutation(({ ctx, input }) => runOnServer(ctx, input)),
  cancel: publicProcedure.input(z.object({ id: idField("id") })).mutation(({ ctx, input }) => cancelRun(ctx, input.id)),
  byId: publicProcedure.input(z.object({ id: idField("id") })).query(({ ctx, input }) => getRun(ctx, input.id)),
  listByChat: publicProcedure
    .input(z.object({ chatId: idField("chatId") }))
    .query(({ ctx, input }) => listRuns(ctx, input.chatId)),
  /** Live: a notice each time a run of the chat changes (status, a call, its result); read the record then. */
  onChange: publicProcedure.input(z.object({ chatId: idField("chatId") })).subscription(async function* ({
    ctx,
    input,
    signal,
  }) {
    await readableChat(ctx.platform.db, ctx.principal, input.chatId);
    const runsOfChat = new Set(
      (await ctx.platform.db.query<{ id: string }>("select id from code_runs where chat_id = $1", [input.chatId])).map(
        (r) => r.id,
      ),
    );
    for await (const [event] of on(ctx.platform.events, "run", { signal })) {
      const { runId, chatId } = event as { runId?: string | null; chatId?: string };
      if (chatId === input.chatId && runId) runsOfChat.add(runId);
      if (chatId === input.chatId || (runId && runsOfChat.has(runId))) yield { runId: runId ?? null, at: Date.now() };
    }
  }),
  /** Live log lines of the chat's runs on the server runner, as they happen. */
  onLog: publicProcedure.input(z.object({ chatId: idField("chatId") })).subscription(async function* ({
    ctx,
    input,
    signal,
  }) {
    await readableChat(ctx.platform.db, ctx.principal, input.chatId);
    const isMine = new Map<string, boolean>();
    for await (const [event] of on(ctx.platform.events, "run-log", { signal })) {
      const { runId, line } = event as { runId: string; line: { level: string; text: string } };
      if (!isMine.has(runId)) {
        const rows = await ctx.platform.db.query("select 1 from code_runs where id = $1 and chat_id = $2", [
          runId,
          input.chatId,
        ]);
        isMine.set(runId, rows.length > 0);
      }
      if (isMine.get(runId)) yield { runId, line };
    }
  }),
});

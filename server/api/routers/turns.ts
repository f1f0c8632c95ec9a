import "server-only";
import { on } from "node:events";
import { z } from "zod";
import { idField } from "@/contracts/code-run";
import type { TurnEvent } from "@/contracts/turn-events";
import { getTurn, listMessages, startTurn, stopTurn } from "../../services/agent/turns";
import { readableChat } from "../../services/chats";
import { createTRPCRouter, publicProcedure } from "../trpc";

export const turnsRouter = createTRPCRouter({
  /** Starts a turn from the web chat; programs run in this page's worker. Events stream on onEvent. */
  send: publicProcedure
    .input(z.object({ chatId: idField("chatId"), message: z.unknown() }))
    .mutation(async ({ ctx, input }) => {
      const { turnId } = await startTurn(ctx, input.chatId, { message: input.message }, "browser");
      return { turnId };
    }),
  stop: publicProcedure
    .input(z.object({ turnId: idField("turnId") }))
    .mutation(({ ctx, input }) => stopTurn(ctx, input.turnId)),
  byId: publicProcedure
    .input(z.object({ turnId: idField("turnId") }))
    .query(({ ctx, input }) => getTurn(ctx, input.turnId)),
  messages: publicProcedure
    .input(z.object({ chatId: idField("chatId") }))
    .query(({ ctx, input }) => listMessages(ctx, input.chatId)),
  /** Live events of the chat's turns. While a page listens, the chat's programs run in its worker. */
  onEvent: publicProcedure.input(z.object({ chatId: idField("chatId") })).subscription(async function* ({
    ctx,
    input,
    signal,
  }) {
    await readableChat(ctx.platform.db, ctx.principal, input.chatId);
    const { cluster } = ctx.platform;
    await cluster.pageEntered(input.chatId);
    try {
      for await (const [payload] of on(ctx.platform.events, "turn", { signal })) {
        const { chatId, event } = payload as { chatId: string; event: TurnEvent };
        if (chatId === input.chatId) yield event;
      }
    } finally {
      await cluster.pageLeft(input.chatId).catch(() => undefined);
    }
  }),
});

import "server-only";
import { z } from "zod";
import { sendTurnInput } from "@/contracts/chats";
import { idField } from "@/contracts/text";
import { turnEvents } from "../../services/agent/turn-feed";
import { getTurn, listMessages, startTurn, stopTurn } from "../../services/agent/turns";
import { createTRPCRouter, publicProcedure } from "../trpc";

const turnRef = z.object({ turnId: idField("turnId") });
const chatRef = z.object({ chatId: idField("chatId") });

export const turnsRouter = createTRPCRouter({
  /** Starts a turn from the web chat; programs run in this page's worker. Events stream on onEvent. */
  send: publicProcedure.input(sendTurnInput).mutation(async ({ ctx, input }) => {
    const { turnId } = await startTurn(ctx, input, "browser");
    return { turnId };
  }),
  stop: publicProcedure.input(turnRef).mutation(({ ctx, input }) => stopTurn(ctx, input.turnId)),
  byId: publicProcedure.input(turnRef).query(({ ctx, input }) => getTurn(ctx, input.turnId)),
  messages: publicProcedure.input(chatRef).query(({ ctx, input }) => listMessages(ctx, input.chatId)),
  /** Live events of the chat's turns. While a page listens, the chat's programs run in its worker. */
  onEvent: publicProcedure
    .input(chatRef)
    .subscription(({ ctx, input, signal }) => turnEvents(ctx, input.chatId, signal)),
});

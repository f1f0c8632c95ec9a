/**
 * The live events of a chat's turns: published by the loop, streamed to a page that reads the chat. While a page listens, the chat's programs
 * run in its worker (page presence is shared by every instance: `platform.cluster`).
 */
import "server-only";
import { on } from "node:events";
import type { TurnEvent } from "@/contracts/turn-events";
import type { Platform } from "../../platform";
import { requireAuth } from "../auth";
import { readableChat } from "../chats";
import type { ServiceContext } from "../context";

/** Publishes a live event of a chat's turn. */
export const emitTurnEvent = (platform: Platform, chatId: string, event: TurnEvent): void => {
  platform.events.emit("turn", { chatId, event });
};

export async function* turnEvents(
  ctx: ServiceContext,
  chatId: string,
  signal: AbortSignal | undefined,
): AsyncGenerator<TurnEvent> {
  await readableChat(ctx.platform.db, ctx.principal, chatId);
  const principal = requireAuth(ctx.principal);
  const { cluster } = ctx.platform;
  // Presence by person: only the person whose turn it is may host its programs (runForHost).
  await cluster.pageEntered(chatId, principal.userId);
  try {
    for await (const [payload] of on(ctx.platform.events, "turn", { signal })) {
      const { chatId: of, event } = payload as { chatId: string; event: TurnEvent };
      if (of === chatId) yield event;
    }
  } finally {
    await cluster.pageLeft(chatId, principal.userId).catch(() => undefined);
  }
}

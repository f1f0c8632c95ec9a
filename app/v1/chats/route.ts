import { createChatInput, listChatsInput } from "@/contracts/chats";
import { guard } from "@/server/api/access";
import { parseInput, queryInput, rest, withBody } from "@/server/http/rest";
import { createChat, listChats } from "@/server/services/chats";

export const dynamic = "force-dynamic";
/** `?query=` keeps the chats whose title contains it. */
export const GET = rest(
  guard("GET /v1/chats", ({ ctx, query }) => listChats(ctx, parseInput(listChatsInput, queryInput(query)))),
);
export const POST = rest(
  guard("POST /v1/chats", ({ ctx, body }) => createChat(ctx, parseInput(createChatInput, withBody(body, {})))),
  { status: 201 },
);

import { rest } from "@/server/http/rest";
import { listMessages } from "@/server/services/agent/turns";

export const dynamic = "force-dynamic";
export const GET = rest(({ ctx, params }) => listMessages(ctx, params.chatId!));

/** What a person sends to answer an App's question (MCP elicitation): tRPC `appOperations.*`, `/v1/app-operations/**`. */
import { z } from "zod";
import { idField } from "./text";

export const pendingInputsQuery = z.object({ chatId: idField("chatId") });

/** Accept with the form's content, decline, or cancel. */
export const appInputAnswer = z.discriminatedUnion(
  "action",
  [
    z.object({
      action: z.literal("accept"),
      content: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.string())])),
    }),
    z.object({ action: z.literal("decline") }),
    z.object({ action: z.literal("cancel") }),
  ],
  { error: 'action must be "accept" (with content), "decline" or "cancel"' },
);
export type AppInputAnswer = z.infer<typeof appInputAnswer>;

/** REST: the path's operation id, the body is the answer. */
export const answerInputInput = z.object({ operationId: idField("operationId"), answer: appInputAnswer });

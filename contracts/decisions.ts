/** What a client sends to list and take decisions (tRPC `decisions.*`, `/v1/decisions/**`). */
import { z } from "zod";
import { idField } from "./text";

export const DECISION_STATUSES = ["pending", "allowed", "denied", "withdrawn"] as const;

export const listDecisionsInput = z.object({
  status: z.enum(DECISION_STATUSES, { error: "status must be pending, allowed, denied or withdrawn" }).optional(),
  chatId: idField("chatId").optional(),
});
export type ListDecisionsInput = z.infer<typeof listDecisionsInput>;

/** REST: the path's id, the body's `decision`. */
export const decideInput = z.object({
  id: idField("id"),
  decision: z.enum(["allow", "deny"], { error: 'decision must be "allow" or "deny"' }),
});
export type DecideInput = z.infer<typeof decideInput>;

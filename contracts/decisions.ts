/**
 * Requests about decisions (SPEC.md "Decisions and replay"): listing them, and answering one or several
 * at once. tRPC `.input()` and the REST routes parse with these same schemas. An answer is an object so
 * it can grow (a remembered grant rides along with `decision`).
 */
import { z } from "zod";
import { idField } from "./code-run";
import { rememberSchema } from "./grants";

export const DECISION_STATUSES = ["pending", "allowed", "denied", "withdrawn"] as const;

export const listDecisionsInput = z.object({
  status: z.enum(DECISION_STATUSES, { error: "status must be pending, allowed, denied or withdrawn" }).optional(),
  chatId: idField("chatId").optional(),
  runId: idField("runId").optional(),
});
export type ListDecisionsInput = z.input<typeof listDecisionsInput>;

/** One person's answer to one decision. */
export const decisionAnswer = z.object({
  decision: z.enum(["allow", "deny"], { error: 'decision must be "allow" or "deny"' }),
  /** Remember this allow as a grant (contracts/grants.ts); checked against who decides in decisions.ts. */
  remember: rememberSchema.nullish(),
});

/** Most decisions one batch may answer (a run has at most this many pending calls worth showing at once). */
export const DECIDE_BATCH_MAX = 1000;

/** One item of a batch: which decision, and the answer. */
export const decisionItem = decisionAnswer.extend({ id: idField("id") });
export type DecisionItem = z.output<typeof decisionItem>;

/** `POST /v1/decisions` and `decisions.decideMany`: all items are applied, or none. */
export const decideManyInput = z.object({
  items: z
    .array(decisionItem, { error: "items must be a list of { id, decision }" })
    .min(1, "items must not be empty")
    .max(DECIDE_BATCH_MAX, `items must have at most ${DECIDE_BATCH_MAX} entries`)
    .refine((items) => new Set(items.map((i) => i.id)).size === items.length, "items must name each decision once"),
});
export type DecideManyInput = z.input<typeof decideManyInput>;

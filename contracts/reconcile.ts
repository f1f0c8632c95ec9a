/** A person's answer to a call whose outcome is Unknown (sent, then the process died). */
import { z } from "zod";

export const reconcileInput = z.discriminatedUnion(
  "action",
  [
    z
      .object({
        action: z.literal("done"),
        /** What the App answered, as the person knows it (text; JSON is handed over as structured content); none is fine. */
        result: z.string().max(100_000, "result must be at most 100000 characters").optional(),
      })
      .strict(),
    z.object({ action: z.literal("send") }).strict(),
  ],
  { error: 'action must be "done" (Mark as done) or "send" (Send again)' },
);
export type ReconcileInput = z.infer<typeof reconcileInput>;

/** `codeRuns.reconcile`: which call of which run, and the answer. */
export const reconcileCallInput = z.intersection(
  z.object({
    runId: z.string().min(1, "runId must not be empty").max(200),
    index: z.number({ error: "index must be a call's index" }).int().min(0, "index must be 0 or more"),
  }),
  reconcileInput,
);

/**
 * How an Unknown call was reconciled: `pending` waits for a person; `send`: a person chose Send again
 * (not yet sent); `sent`: sent again on their word; `auto`: retried once by the server (a trusted
 * connection's idempotent tool); `done`: a person marked it done (nothing sent).
 */
export type UnknownState = "pending" | "send" | "sent" | "auto" | "done";

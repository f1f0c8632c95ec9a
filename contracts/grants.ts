/** What crosses the boundary for remembered grants: the `remember` part of a decision, and the grants list. */
import { z } from "zod";

export const GRANT_SCOPES = ["run", "chat", "everyone"] as const;
export type GrantScope = (typeof GRANT_SCOPES)[number];

/**
 * `remember` on an allow: later calls that match are allowed without asking. `match: "binding"`: any
 * arguments; `"arguments"`: exactly these. `scope: "everyone"` is for admins.
 */
export const rememberSchema = z
  .object({
    scope: z.enum(GRANT_SCOPES, { error: 'remember.scope must be "run", "chat" or "everyone"' }),
    ttlMinutes: z
      .number({ error: "remember.ttlMinutes must be a number of minutes" })
      .int("remember.ttlMinutes must be a whole number of minutes")
      .min(1, "remember.ttlMinutes must be at least 1")
      .max(525_600, "remember.ttlMinutes must be at most 525600 (a year)")
      .optional(),
    match: z.enum(["binding", "arguments"], { error: 'remember.match must be "binding" or "arguments"' }),
  })
  .strict();
export type Remember = z.infer<typeof rememberSchema>;

export const listGrantsInput = z
  .object({
    chatId: z.string().max(200).optional(),
    runId: z.string().max(200).optional(),
    /** Revoked and expired grants too (the audit view). */
    all: z.boolean({ error: "all must be true or false" }).optional(),
  })
  .strict();

export type ListGrantsInput = z.infer<typeof listGrantsInput>;

export const grantIdInput = z.object({ id: z.string().min(1, "id must not be empty").max(200) });
export type GrantIdInput = z.infer<typeof grantIdInput>;

export interface GrantView {
  id: string;
  scope: GrantScope;
  runId: string | null;
  chatId: string | null;
  /** The chat's title (scope chat or run), for a person to recognise it; null for everyone or a deleted chat. */
  chatTitle: string | null;
  connectionId: string;
  tool: string;
  binding: string;
  match: "binding" | "arguments";
  /** For `match: "arguments"`: the arguments it allows. */
  arguments?: unknown;
  decisionId: string | null;
  createdBy: { id: string; name: string };
  createdAt: number;
  expiresAt: number | null;
  revokedBy: { id: string; name: string } | null;
  revokedAt: number | null;
  uses: number;
  active: boolean;
}

/**
 * What an admin sends to manage vault entries (tRPC `vault.*`, `/v1/vault/**`). REST puts the path's
 * name into the body before parsing, so a bad name is a 400 naming `name` on both.
 */
import { z } from "zod";
import { ROLES } from "./people";
import { onlyFields } from "./text";

/** Shortest secret accepted: every App answer is redacted against every secret, so a short one would be guessable and hide ordinary words. */
export const MIN_SECRET_LENGTH = 8;
/** Fewest different characters (whitespace aside) a secret must have. */
export const MIN_SECRET_VARIETY = 4;

export const vaultNameSchema = z
  .string({ error: "name is required" })
  .regex(/^[a-z0-9_-]+(\/[a-z0-9_-]+)*$/, "name must be lowercase words separated by /, like github/token")
  .max(200, "name must be at most 200 characters");

const secretSchema = z
  .string({ error: "secret is required" })
  .min(
    MIN_SECRET_LENGTH,
    `secret must be at least ${MIN_SECRET_LENGTH} characters (shorter ones are guessable and would be hidden inside ordinary text)`,
  )
  .max(16_384, "secret must be at most 16384 characters")
  // Eight spaces or a row of dashes are in ordinary text (indents, rules, aligned columns): hiding them
  // would garble every answer. A real secret has more variety than that.
  .refine((s) => new Set(s.replace(/\s/g, "")).size >= MIN_SECRET_VARIETY, {
    message: `secret must have at least ${MIN_SECRET_VARIETY} different characters besides spaces (a run of one character is ordinary text, and every App answer would have it hidden)`,
  });

const target = z.object({
  connection: z.string({ error: "allow[].connection is required" }).min(1, "allow[].connection must not be empty"),
  tool: z.string({ error: "allow[].tool is required" }).min(1, "allow[].tool must not be empty"),
});
const targets = z.array(target, { error: "allow must be a list of { connection, tool }" });

const usableBy = z
  .object(
    {
      users: z
        .array(z.string().min(1, "usableBy.users[] must not be empty"), {
          error: "usableBy.users must be a list of user ids",
        })
        .max(1000)
        .default([]),
      roles: z
        .array(z.enum(ROLES, { error: 'usableBy.roles[] must be "admin" or "member"' }), {
          error: 'usableBy.roles must be a list of "admin" / "member"',
        })
        .default([]),
    },
    { error: 'usableBy must be { users?: [userId], roles?: ["admin" | "member"] }' },
  )
  .strict();
export type UsableBy = z.infer<typeof usableBy>;

/** A new entry; by default only admins may use it and it goes to no target. */
export const createVaultInput = onlyFields(
  {
    name: vaultNameSchema,
    secret: secretSchema,
    allow: targets.default([]),
    usableBy: usableBy.default({ users: [], roles: ["admin"] }),
  },
  "a secret takes name, secret, allow and usableBy",
);
export type CreateVaultInput = z.infer<typeof createVaultInput>;

/** Replaces an entry's secret in place (and its targets or users when given). */
export const rotateVaultInput = onlyFields(
  {
    name: vaultNameSchema,
    secret: secretSchema,
    allow: targets.optional(),
    usableBy: usableBy.optional(),
  },
  "a rotation takes name, secret, allow and usableBy",
);
export type RotateVaultInput = z.infer<typeof rotateVaultInput>;

/** Who may use an entry, without touching its secret. */
export const vaultAccessInput = onlyFields(
  { name: vaultNameSchema, usableBy },
  "a change of access takes usableBy only",
);
export type VaultAccessInput = z.infer<typeof vaultAccessInput>;

export const vaultEntryInput = z.object({ name: vaultNameSchema });

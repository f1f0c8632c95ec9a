/** What crosses the boundary for signing in to an OAuth App: one schema for REST and the service. */
import { z } from "zod";

/** `shared`: the connection's own sign-in (admins); `me`: the caller's own, for a per-person App. */
export const oauthWhoSchema = z.enum(["shared", "me"], { error: 'for must be "shared" or "me"' });

/**
 * Where the callback sends the person back: a same-origin relative path, `/` or a chat (`/chats/<id>`),
 * never an absolute URL (an open redirect).
 */
export const oauthReturnToSchema = z
  .string({ error: "returnTo must be a path" })
  .max(300, "returnTo is too long")
  .regex(/^\/(chats\/[A-Za-z0-9_-]+)?$/, 'returnTo must be "/" or a chat path like "/chats/<id>"');

export const oauthSignInSchema = z.strictObject({ for: oauthWhoSchema, returnTo: oauthReturnToSchema.optional() });
export type OAuthSignIn = z.infer<typeof oauthSignInSchema>;

/** The callback's query, as the authorization server sends it (RFC 6749 §4.1.2, RFC 9207). */
export const oauthCallbackSchema = z.object({
  state: z.string({ error: "state is required" }).min(1, "state is required").max(512),
  code: z.string().max(4096).optional(),
  iss: z.string().max(2048).optional(),
  error: z.string().max(200).optional(),
  error_description: z.string().max(1000).optional(),
});

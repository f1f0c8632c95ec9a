/**
 * The HTTP trust boundary, one rule for REST (`/v1`) and tRPC (`/api/trpc`) alike. In order: the caller
 * is authenticated; an unsafe request (POST/PUT/PATCH/DELETE) that rides on the session cookie must come
 * from the server's own origin (`Origin`, or `Sec-Fetch-Site: same-origin` without one), and a safe one
 * with the cookie must not be one a browser marks as made by another page (`Sec-Fetch-Site`), so a page
 * elsewhere cannot act with a signed-in person's cookie (Bearer requests are exempt: a browser never adds
 * that header on its own); an unauthenticated request gets no body read beyond a small bound (only
 * sign-in is open to it); a body must be JSON; and it is read as a stream up to `OPENBOT_MAX_BODY_BYTES`.
 * Refusals are returned as data (code + message) for each adapter to shape. A database that cannot be
 * reached while the caller is looked up is a refusal too (503, nothing was done: send it again), never a
 * bare 500 a client cannot tell from a bug.
 */
import "server-only";
import { type Context, createContextFromRequest } from "../api/trpc";
import { isStorageUnavailable } from "../db/client";
import { logFailure } from "../log";
import { readCookie, SESSION_COOKIE } from "../services/auth";
import type { AppErrorCode } from "../services/errors";
import { ownOrigin } from "./origin";

/** Most bytes an unauthenticated request may send (its only use is the sign-in mutation). */
export const ANONYMOUS_BODY_BYTES = 16 * 1024;

const UNSAFE = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export interface Refusal {
  code: AppErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

export type Admission = { ok: true; ctx: Context; body: string | undefined } | { ok: false; refusal: Refusal };

export interface AdmitOptions {
  /** An unauthenticated unsafe request may proceed (with at most ANONYMOUS_BODY_BYTES); else it gets 401 unread. */
  anonymousAllowed: boolean;
  /**
   * A safe request from another site's page may proceed: only where another site sends the person on
   * purpose (the OAuth callback, a top-level navigation from the authorization server).
   */
  crossSite?: boolean;
}

/** Authenticates, checks origin, media type and size, and reads the body of an unsafe request. */
export async function admit(req: Request, options: AdmitOptions): Promise<Admission> {
  let ctx: Context;
  try {
    ctx = await createContextFromRequest(req);
  } catch (error) {
    if (!isStorageUnavailable(error)) throw error;
    const errorId = logFailure("admit_unavailable", error, { method: req.method, url: new URL(req.url).pathname });
    return {
      ok: false,
      refusal: {
        code: "UNAVAILABLE",
        message: `The database is unavailable right now, so the request was not carried out (${errorId}); send it again.`,
        details: { errorId, retryable: true },
      },
    };
  }
  if (!UNSAFE.has(req.method)) {
    const site = options.crossSite ? null : checkFetchSite(req);
    return site ? { ok: false, refusal: site } : { ok: true, ctx, body: undefined };
  }

  const origin = checkOrigin(req, ownOrigin(req, ctx.platform.env));
  if (origin) return { ok: false, refusal: origin };

  if (!ctx.principal && !options.anonymousAllowed) {
    return { ok: false, refusal: { code: "UNAUTHORIZED", message: "Sign in or send an API key as a Bearer token." } };
  }
  const type = mediaType(req.headers.get("content-type"));
  if (type !== null && type !== "application/json") return { ok: false, refusal: notJson(type) };

  const limit = ctx.principal ? ctx.platform.env.OPENBOT_MAX_BODY_BYTES : ANONYMOUS_BODY_BYTES;
  const read = await readLimited(req, limit);
  if (!read.ok) return { ok: false, refusal: tooLarge(limit, !ctx.principal) };
  if (type === null && read.text.trim()) return { ok: false, refusal: notJson(null) };
  return { ok: true, ctx, body: read.text };
}

/** The origin rule; null when the request may proceed. */
function checkOrigin(req: Request, own: string): Refusal | null {
  const bearer = /^Bearer\s+\S/i.test(req.headers.get("authorization") ?? "");
  if (bearer) return null;
  const cookie = readCookie(req.headers.get("cookie") ?? "", SESSION_COOKIE) !== undefined;
  const origin = req.headers.get("origin");
  if (origin !== null) {
    if (origin.toLowerCase() === own) return null;
    return {
      code: "FORBIDDEN",
      message: `Refused: a ${req.method} from the origin ${origin} is not allowed; only pages of ${own} may send it with the session cookie. Other clients send an API key as a Bearer token. Behind a reverse proxy, set OPENBOT_PUBLIC_ORIGIN to the address browsers use.`,
    };
  }
  if (!cookie) return null;
  if (req.headers.get("sec-fetch-site") === "same-origin") return null;
  return {
    code: "FORBIDDEN",
    message: `Refused: a ${req.method} with the session cookie must say where it comes from (an Origin header of ${own}). Other clients send an API key as a Bearer token.`,
  };
}

/**
 * A safe request (GET) with the session cookie that a browser says another site's page made (or a page of
 * this site on another port or subdomain: "same-site" is not "same-origin") is refused too: some reads
 * have effects (a recorded App read, a page's presence that routes a chat's programs to a browser), and
 * the cookie goes along with such requests. A request without `Sec-Fetch-Site` is not a browser's page.
 */
function checkFetchSite(req: Request): Refusal | null {
  const site = req.headers.get("sec-fetch-site");
  if (site === null || site === "same-origin" || site === "none") return null;
  if (/^Bearer\s+\S/i.test(req.headers.get("authorization") ?? "")) return null;
  if (readCookie(req.headers.get("cookie") ?? "", SESSION_COOKIE) === undefined) return null;
  return {
    code: "FORBIDDEN",
    message: `Refused: a ${req.method} with the session cookie from a ${site} page is not allowed; only this server's own pages may send it. Other clients send an API key as a Bearer token.`,
  };
}

function mediaType(header: string | null): string | null {
  if (header === null) return null;
  return header.split(";", 1)[0]!.trim().toLowerCase();
}

function notJson(type: string | null): Refusal {
  return {
    code: "UNSUPPORTED_MEDIA_TYPE",
    message: `The request body must be JSON sent with Content-Type: application/json${type ? ` (got ${type})` : " (none was sent)"}.`,
  };
}

function tooLarge(limit: number, anonymous: boolean): Refusal {
  return {
    code: "PAYLOAD_TOO_LARGE",
    message: anonymous
      ? `The request body is larger than ${formatBytes(limit)} (${limit} bytes), the most a request may send before signing in.`
      : `The request body is larger than the limit of ${formatBytes(limit)} (${limit} bytes; OPENBOT_MAX_BODY_BYTES).`,
  };
}

function formatBytes(n: number): string {
  if (n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

/**
 * Reads the body as UTF-8, keeping nothing once it passes `limit` bytes. A declared length over the limit
 * is refused without keeping anything either; its bytes are still read and dropped when there are at most
 * `limit` × 16 of them, like a chunked body's rest, so the client gets the refusal instead of a reset.
 */
async function readLimited(req: Request, limit: number): Promise<{ ok: true; text: string } | { ok: false }> {
  const declared = Number(req.headers.get("content-length") ?? "");
  if (Number.isFinite(declared) && declared > limit) {
    if (req.body && declared <= limit * 16) await discardRest(req.body.getReader(), limit);
    return { ok: false };
  }
  if (!req.body) return { ok: true, text: "" };
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await discardRest(reader, limit);
      return { ok: false };
    }
    chunks.push(value);
  }
  return { ok: true, text: Buffer.concat(chunks).toString("utf8") };
}

/**
 * Drops (keeps nothing of) the rest of a refused body before the refusal is sent, so a client still
 * sending gets the answer rather than a reset connection: when the server closes a socket with unread
 * bytes in it, the kernel answers with a reset that can reach the client before it has read the refusal.
 * Past a further `limit` × 16 bytes the connection is cut instead.
 */
async function discardRest(reader: ReadableStreamDefaultReader<Uint8Array>, limit: number): Promise<void> {
  let dropped = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      dropped += value.byteLength;
      if (dropped > limit * 16) return void (await reader.cancel());
    }
  } catch {
    // the client went away
  }
}

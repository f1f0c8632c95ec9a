import { TRPCError } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { appRouter } from "@/server/api/root";
import { type Context, trpcCodeOf } from "@/server/api/trpc";
import { admit } from "@/server/http/boundary";

export const dynamic = "force-dynamic";

/** Procedures an unauthenticated caller may send a (small) body to. */
const ANONYMOUS_PROCEDURES = new Set(["auth.signIn", "auth.signOut"]);
const ENDPOINT = "/api/trpc";

async function handler(req: Request) {
  const paths = new URL(req.url).pathname.slice(ENDPOINT.length + 1).split(",");
  const admission = await admit(req, { anonymousAllowed: paths.every((p) => ANONYMOUS_PROCEDURES.has(p)) });
  let context: Context | undefined;
  return fetchRequestHandler({
    endpoint: ENDPOINT,
    // The body was read (within its limit) by the boundary, or refused unread.
    req: !admission.ok ? unread(req) : admission.body !== undefined ? withBody(req, admission.body) : req,
    router: appRouter,
    createContext: async () => {
      if (!admission.ok)
        throw new TRPCError({ code: trpcCodeOf(admission.refusal.code), message: admission.refusal.message });
      context = admission.ctx;
      return context;
    },
    responseMeta: ({ errors }) => {
      const headers = new Headers();
      for (const c of context?.responseCookies ?? []) headers.append("set-cookie", c);
      const retryAfter = errors.map((e) => retryAfterOf(e.cause)).find((s) => s !== undefined);
      if (retryAfter !== undefined) headers.set("retry-after", String(retryAfter));
      return { headers };
    },
  });
}

/** The same request with a body already read (tRPC parses it again from the string). */
function withBody(req: Request, body: string): Request {
  const headers = new Headers(req.headers);
  headers.delete("content-length");
  if (!headers.has("content-type")) headers.set("content-type", "application/json");
  return new Request(req.url, { method: req.method, headers, body: body || undefined, signal: req.signal });
}

/** A refused request without its body, so tRPC answers with the refusal from createContext. */
function unread(req: Request): Request {
  return new Request(req.url, {
    method: req.method,
    headers: { "content-type": "application/json" },
    signal: req.signal,
  });
}

/** A rate-limit refusal's wait in seconds (tagged by code, not class: errors cross module graphs). */
function retryAfterOf(cause: unknown): number | undefined {
  const e = cause as { code?: unknown; details?: { retryAfterSeconds?: unknown } } | undefined;
  return e?.code === "TOO_MANY_REQUESTS" && typeof e.details?.retryAfterSeconds === "number"
    ? e.details.retryAfterSeconds
    : undefined;
}

export { handler as GET, handler as POST };

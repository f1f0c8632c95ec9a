/**
 * The REST adapter: every `/v1` route handler is `rest(async ({ ctx, params, body }) => …)`. It resolves
 * the caller and admits the request through the HTTP boundary (boundary.ts: origin, media type, size),
 * parses a JSON body with a clear error, and maps domain errors to HTTP statuses in one place. Unexpected causes are logged by error id, never sent.
 */
import "server-only";
import type { Context } from "../api/trpc";
import { AppError, HTTP_STATUS } from "../services/errors";
import { admit } from "./boundary";
import { toPublicError } from "./public-error";

type Params = Record<string, string | string[]>;

export interface RestArgs<P extends Params = Record<string, string>> {
  ctx: Context;
  req: Request;
  params: P;
  body: unknown;
  query: URLSearchParams;
}

export function rest<P extends Params = Record<string, string>>(
  handler: (args: RestArgs<P>) => Promise<unknown>,
  options: { status?: number } = {},
): (req: Request, route: { params: Promise<P> }) => Promise<Response> {
  return async (req, route) => {
    try {
      const params = ((await route.params) ?? {}) as P;
      const admission = await admit(req, { anonymousAllowed: false });
      if (!admission.ok) throw new AppError(admission.refusal.code, admission.refusal.message);
      const { ctx } = admission;
      let body: unknown;
      if (admission.body?.trim()) {
        try {
          body = JSON.parse(admission.body);
        } catch {
          throw new AppError("BAD_REQUEST", "The request body is not valid JSON.");
        }
      }
      const value = await handler({ ctx, req, params, body, query: new URL(req.url).searchParams });
      // A handler that answers other than JSON (the metrics' text format) hands back its Response.
      if (value instanceof Response) return value;
      return Response.json(value, { status: options.status ?? 200, headers: { "cache-control": "no-store" } });
    } catch (error) {
      const failure = toPublicError(error, "rest_failed", { method: req.method, url: new URL(req.url).pathname });
      return Response.json(
        { error: failure },
        { status: failure.code === "INTERNAL" ? 500 : HTTP_STATUS[failure.code] },
      );
    }
  };
}

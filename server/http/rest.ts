/**
 * The REST adapter: every `/v1` route handler is `rest(async ({ ctx, params, body }) => …)`. It resolves
 * the caller and admits the request through the HTTP boundary (boundary.ts: origin, media type, size),
 * parses a JSON body with a clear error, and maps domain errors to HTTP statuses in one place. Unexpected
 * causes are logged by error id, never sent. A route parses its input with the same contract schema as its
 * tRPC procedure (`parseInput`), putting the path's ids where the procedure's input has them (`withBody`).
 */
import "server-only";
import type { z } from "zod";
import type { Context } from "../api/trpc";
import { AppError, HTTP_STATUS, invalidInput, refuseNul } from "../services/errors";
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
      if (!admission.ok)
        throw new AppError(admission.refusal.code, admission.refusal.message, admission.refusal.details);
      const { ctx } = admission;
      let body: unknown;
      if (admission.body?.trim()) {
        try {
          body = JSON.parse(admission.body);
        } catch {
          throw new AppError("BAD_REQUEST", "The request body is not valid JSON.");
        }
      }
      const query = new URL(req.url).searchParams;
      // Ids and filters name rows: one with a NUL (which no text column can hold) names none.
      refuseNul(params, "path");
      refuseNul(Object.fromEntries(query), "query");
      const value = await handler({ ctx, req, params, body, query });
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

/** Parses a route's input with its contract schema (the one its tRPC procedure uses): a 400 naming each wrong field. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw invalidInput(parsed.error.issues);
  return parsed.data;
}

/** The JSON body (none: `{}`) with the path's ids merged in, which win over the body's. */
export function withBody(body: unknown, ids: Record<string, string | undefined>): Record<string, unknown> {
  if (body !== undefined && (typeof body !== "object" || body === null || Array.isArray(body)))
    throw new AppError("BAD_REQUEST", "The request body must be a JSON object.");
  return { ...(body as Record<string, unknown> | undefined), ...ids };
}

/** The query string as an object of its (last) values, for `parseInput`; an empty value (`?chatId=`) is absent. */
export const queryInput = (query: URLSearchParams): Record<string, string> =>
  Object.fromEntries([...query].filter(([, value]) => value !== ""));

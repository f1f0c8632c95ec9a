/**
 * tRPC: context → init → procedures. The context is built apart from the Next request
 * (`createContextInner`) so tests call procedures through `createCaller` with no HTTP. Domain errors
 * become TRPCErrors here, in one place, with their safe details in `data.details`; any other failure is
 * logged by error id and reaches the caller only as that id (as on REST).
 */
import "server-only";
import { initTRPC, TRPCError } from "@trpc/server";
import { getPlatform } from "../boot";
import { clientAddress, servedOverHttps } from "../http/origin";
import { toPublicError } from "../http/public-error";
import type { Platform } from "../platform";
import { authenticate, type Principal, readCookie, SESSION_COOKIE } from "../services/auth";
import { AppError, type AppErrorCode, invalidInput, isAppError } from "../services/errors";
import { checkProcedureAccess } from "./access";

export interface Context {
  platform: Platform;
  principal: Principal | null;
  /** The UI's session id from the cookie, when the request carried one. */
  sessionId: string | null;
  /** Set-Cookie values a procedure wants on the response (sign in / out). */
  responseCookies: string[];
  /** The client's address as the socket saw it ("unknown" outside HTTP). */
  clientAddress: string;
  /** Browsers reach the server over https: cookies get `Secure`. */
  https: boolean;
}

export function createContextInner(
  platform: Platform,
  principal: Principal | null,
  sessionId: string | null = null,
): Context {
  return { platform, principal, sessionId, responseCookies: [], clientAddress: "unknown", https: false };
}

export async function createContextFromRequest(req: Request): Promise<Context> {
  const platform = await getPlatform();
  const cookie = req.headers.get("cookie");
  const principal = await authenticate(platform.db, { authorization: req.headers.get("authorization"), cookie });
  const ctx = createContextInner(platform, principal, readCookie(cookie ?? "", SESSION_COOKIE) ?? null);
  return { ...ctx, clientAddress: clientAddress(req), https: servedOverHttps(req, platform.env) };
}

const TRPC_CODES: Record<AppErrorCode, TRPCError["code"]> = {
  UNAUTHORIZED: "UNAUTHORIZED",
  FORBIDDEN: "FORBIDDEN",
  NOT_FOUND: "NOT_FOUND",
  CONFLICT: "CONFLICT",
  BAD_REQUEST: "BAD_REQUEST",
  UNAVAILABLE: "SERVICE_UNAVAILABLE",
  PAYLOAD_TOO_LARGE: "PAYLOAD_TOO_LARGE",
  UNSUPPORTED_MEDIA_TYPE: "UNSUPPORTED_MEDIA_TYPE",
  TOO_MANY_REQUESTS: "TOO_MANY_REQUESTS",
};

/** The tRPC code of a domain error code (for refusals made before a procedure runs). */
export const trpcCodeOf = (code: AppErrorCode): TRPCError["code"] => TRPC_CODES[code];

const t = initTRPC.context<Context>().create({
  errorFormatter({ shape, error }) {
    const cause = error.cause;
    return {
      ...shape,
      data: {
        ...shape.data,
        stack: undefined,
        details: isAppError(cause) ? (cause.details ?? null) : isInternal(cause) ? { errorId: cause.errorId } : null,
      },
    };
  },
});

/** What the caller learns of a failure that is not a domain error: its error id. */
class InternalFailure extends Error {
  readonly kind = "InternalFailure" as const;
  constructor(
    message: string,
    readonly errorId: string,
  ) {
    super(message);
  }
}
const isInternal = (value: unknown): value is InternalFailure =>
  typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "InternalFailure";

/** A schema's failure (zod's error, from any module graph): a list of issues with paths. */
const hasIssues = (value: unknown): value is { issues: { path: PropertyKey[]; message: string }[] } =>
  typeof value === "object" && value !== null && Array.isArray((value as { issues?: unknown }).issues);

const domainErrors = t.middleware(async ({ next, path }) => {
  const result = await next();
  if (result.ok) return result;
  const cause = result.error.cause;
  // Input the contract schema refused: the same message and `details.fields` as REST sends.
  if (result.error.code === "BAD_REQUEST" && hasIssues(cause)) {
    const invalid = invalidInput(cause.issues);
    throw new TRPCError({ code: "BAD_REQUEST", message: invalid.message, cause: invalid });
  }
  // tRPC's other refusals (unknown procedure, …) keep their code; the rest pass the one rule.
  if (!isAppError(cause) && (result.error.code !== "INTERNAL_SERVER_ERROR" || isInternal(cause))) return result;
  const failure = toPublicError(cause ?? result.error, "trpc_failed", { path });
  if (failure.code === "INTERNAL") {
    throw new TRPCError({
      code: "INTERNAL_SERVER_ERROR",
      message: failure.message,
      cause: new InternalFailure(failure.message, failure.errorId),
    });
  }
  // A database that could not be reached (UNAVAILABLE) carries its error id as a domain error's details.
  const domain = isAppError(cause) ? cause : new AppError(failure.code, failure.message, failure.details);
  throw new TRPCError({ code: TRPC_CODES[failure.code], message: failure.message, cause: domain });
});

/** Every procedure first passes its row of the access table (server/api/access.ts). */
const access = t.middleware(({ ctx, path, next }) => {
  checkProcedureAccess(path, ctx.principal);
  return next();
});

export const createTRPCRouter = t.router;
export const createCallerFactory = t.createCallerFactory;
export const publicProcedure = t.procedure.use(domainErrors).use(access);

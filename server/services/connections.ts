/**
 * Connections (MCP servers) as admins manage them, and the bindings' declarations everyone with
 * apps.use can read. Thin: the App registry does the work; this layer checks who may do it.
 */
import "server-only";
import type { AddConnectionInput, CodeApiInput, ConnectionPatch, PoliciesPatch } from "@/contracts/connections";
import { canonicalJson } from "@/worker/canonical-json";
import { SIGN_IN_FIRST } from "../apps/connection";
import { declarations } from "../apps/declarations";
import { isConnectionConfigError } from "../apps/errors";
import type { ConnectionView, ToolEntry } from "../apps/registry";
import { memberTransport } from "../apps/transports";
import type { Platform } from "../platform";
import { checkCall, performAppCall } from "./app-calls";
import { isAdmin, type Principal, requirePermission } from "./auth";
import type { ServiceContext } from "./context";
import { AppError, isAppError } from "./errors";
import { redactKnown } from "./vault";

/** Registry errors that are the caller's fault become BAD_REQUEST / NOT_FOUND with their message. */
async function adminCall<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isAppError(error)) throw error;
    if (isConnectionConfigError(error)) {
      if (error.code === "NOT_FOUND") throw new AppError("NOT_FOUND", "No such connection.");
      throw new AppError("BAD_REQUEST", error.message, error.field ? { field: error.field } : undefined);
    }
    throw error;
  }
}

/** What a member reads for a failed connection: whether they can do something about it, not the admin's diagnosis. */
export const MEMBER_CONNECTION_ERROR = "This App is not available now; an admin can see why in Admin · Apps.";

/**
 * A connection as `principal` may see it. Its error (which can quote the App's stderr, its URL or its
 * command line) has every vault secret hidden; a member sees only whether they must sign in, with the
 * transport without how it is reached (`memberTransport`).
 */
async function shown(ctx: ServiceContext, view: ConnectionView, admin: boolean): Promise<ConnectionView> {
  const error = view.error && (await redactKnown(ctx.platform, view.error));
  if (admin) return error === undefined ? view : { ...view, error };
  const { error: _hidden, ...rest } = view;
  return {
    ...rest,
    transport: memberTransport(view.transport),
    ...(error ? { error: error === SIGN_IN_FIRST ? error : MEMBER_CONNECTION_ERROR } : {}),
  };
}

/** Every connection, as the caller may see it (`shown`). */
export async function listConnections(ctx: ServiceContext) {
  const p = requirePermission(ctx.principal, "apps.use");
  const admin = isAdmin(p);
  return Promise.all(ctx.platform.apps.connections().map((v) => shown(ctx, v, admin)));
}

export async function addConnection(ctx: ServiceContext, input: AddConnectionInput) {
  requirePermission(ctx.principal, "platform.admin");
  const view = await adminCall(() => ctx.platform.apps.add({ name: input.name, transport: input.transport as never }));
  ctx.platform.events.emit("connection-changed", { connectionId: view.id });
  return shown(ctx, view, true);
}

export async function updateConnection(ctx: ServiceContext, input: { id: string; patch: ConnectionPatch }) {
  requirePermission(ctx.principal, "platform.admin");
  const view = await adminCall(() => ctx.platform.apps.update(input.id, input.patch));
  ctx.platform.events.emit("connection-changed", { connectionId: input.id });
  return shown(ctx, view, true);
}

export async function removeConnection(ctx: ServiceContext, id: string) {
  requirePermission(ctx.principal, "platform.admin");
  await adminCall(() => ctx.platform.apps.remove(id));
  ctx.platform.events.emit("connection-changed", { connectionId: id });
  return { ok: true as const };
}

export async function setPolicies(ctx: ServiceContext, input: { id: string; policies: PoliciesPatch }) {
  requirePermission(ctx.principal, "platform.admin");
  const view = await adminCall(() => ctx.platform.apps.setPolicies(input.id, input.policies));
  ctx.platform.events.emit("connection-changed", { connectionId: input.id });
  return shown(ctx, view, true);
}

/** TypeScript declarations of the bindings (openbot_code_api), filtered by word or connection. */
export async function codeApi(ctx: ServiceContext, input: CodeApiInput = {}): Promise<{ declarations: string }> {
  requirePermission(ctx.principal, "apps.use");
  return {
    declarations: await declarations(ctx.platform.apps.catalog(), {
      query: input.query || undefined,
      connection: input.connection || undefined,
    }),
  };
}

/**
 * The built-in Email app's outbox (its list-sent tool), for the UI. A page reading App data is an App
 * call like a program's: the same capability check (apps.use, then the tool's policy), recorded as an App
 * operation, its answer redacted. `deny` refuses; `ask` refuses too, because a page has no run to pause:
 * the person is told to make the call from a chat, where it can wait for a decision.
 */
export async function emailOutbox({ platform, principal }: ServiceContext) {
  const p = requirePermission(principal, "apps.use");
  const entry = platform.apps.tools().find((t) => t.connectionId === "conn_email" && t.name === "list-sent");
  if (!entry) return { available: false as const, emails: [] };
  const result = (await readAppData(platform, p, entry, {})) as { structuredContent?: { emails?: unknown[] } };
  const emails = (result.structuredContent?.emails ?? []) as {
    id: string;
    to: string;
    subject: string;
    body: string;
    sentAt: number | string;
  }[];
  return { available: true as const, emails };
}

/** A page's read of App data: the gateway's check, then one recorded App operation (no chat, no run). */
async function readAppData(
  platform: Platform,
  principal: Principal,
  entry: ToolEntry,
  args: Record<string, unknown>,
): Promise<unknown> {
  const argsJson = canonicalJson(JSON.stringify(args));
  const check = await checkCall(platform, principal, entry, argsJson);
  if (check.verdict === "refuse") throw new AppError("FORBIDDEN", check.rejection.message);
  if (check.verdict === "ask") {
    throw new AppError(
      "FORBIDDEN",
      `apps.${entry.binding} needs a person's decision (its policy is "ask"), which a page cannot wait for: run it from a chat, or ask an admin to allow it.`,
      { reason: "needs_decision", binding: entry.binding },
    );
  }
  const { outcome } = await performAppCall(platform, {
    chatId: null,
    runId: null,
    index: null,
    entry,
    argsJson,
    principal,
  });
  if (outcome.type === "ok") return JSON.parse(outcome.resultJson) as unknown;
  if (outcome.name === "VaultDenied") throw new AppError("FORBIDDEN", outcome.message);
  throw new AppError("UNAVAILABLE", `apps.${entry.binding} failed: ${outcome.message}`, {
    reason: (outcome.details as { reason?: string } | undefined)?.reason ?? "unavailable",
  });
}

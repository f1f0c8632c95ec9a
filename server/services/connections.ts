/**
 * Connections (MCP servers) as admins manage them, and the bindings' declarations everyone with
 * apps.use can read. Thin: the App registry does the work; this layer checks who may do it.
 */
import "server-only";
import { z } from "zod";
import { policiesPatchSchema } from "@/contracts/connections";
import { plainName } from "@/contracts/text";
import { canonicalJson } from "@/worker/canonical-json";
import { declarations } from "../apps/declarations";
import { isConnectionConfigError } from "../apps/errors";
import type { ToolEntry } from "../apps/registry";
import type { Platform } from "../platform";
import { checkCall, performAppCall } from "./app-calls";
import { type Principal, requirePermission } from "./auth";
import { AppError, invalidInput, isAppError } from "./errors";

const addInput = z.object({
  name: plainName("name", 100),
  transport: z.unknown(),
});
const updateInput = z
  .object({
    name: plainName("name", 100).optional(),
    enabled: z.boolean({ error: "enabled must be true or false" }).optional(),
  })
  .strict();

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

export function listConnections(platform: Platform, principal: Principal | null) {
  requirePermission(principal, "apps.use");
  return platform.apps.connections();
}

export async function addConnection(platform: Platform, principal: Principal | null, input: unknown) {
  requirePermission(principal, "platform.admin");
  const parsed = addInput.safeParse(input);
  if (!parsed.success) throw invalidInput(parsed.error.issues);
  const view = await adminCall(() =>
    platform.apps.add({ name: parsed.data.name, transport: parsed.data.transport as never }),
  );
  platform.events.emit("connection-changed", { connectionId: view.id });
  return view;
}

export async function updateConnection(platform: Platform, principal: Principal | null, id: string, input: unknown) {
  requirePermission(principal, "platform.admin");
  const parsed = updateInput.safeParse(input);
  if (!parsed.success) throw invalidInput(parsed.error.issues);
  const view = await adminCall(() => platform.apps.update(id, parsed.data));
  platform.events.emit("connection-changed", { connectionId: id });
  return view;
}

export async function removeConnection(platform: Platform, principal: Principal | null, id: string) {
  requirePermission(principal, "platform.admin");
  await adminCall(() => platform.apps.remove(id));
  platform.events.emit("connection-changed", { connectionId: id });
  return { ok: true as const };
}

export async function setPolicies(platform: Platform, principal: Principal | null, id: string, input: unknown) {
  requirePermission(principal, "platform.admin");
  const parsed = policiesPatchSchema.safeParse(input);
  if (!parsed.success) throw invalidInput(parsed.error.issues);
  const view = await adminCall(() => platform.apps.setPolicies(id, parsed.data));
  platform.events.emit("connection-changed", { connectionId: id });
  return view;
}

const codeApiInput = z.object({ query: z.string().max(200).optional(), connection: z.string().max(100).optional() });

/** TypeScript declarations of the bindings (openbot_code_api), filtered by word or connection. */
export async function codeApi(
  platform: Platform,
  principal: Principal | null,
  input: unknown,
): Promise<{ declarations: string }> {
  requirePermission(principal, "apps.use");
  const parsed = codeApiInput.safeParse(input ?? {});
  if (!parsed.success) throw invalidInput(parsed.error.issues);
  return {
    declarations: await declarations(platform.apps.tools(), {
      query: parsed.data.query || undefined,
      connection: parsed.data.connection || undefined,
    }),
  };
}

/**
 * The built-in Email app's outbox (its list-sent tool), for the UI. A page reading App data is an App
 * call like a program's: the same capability check (apps.use, then the tool's policy), recorded as an App
 * operation, its answer redacted. `deny` refuses; `ask` refuses too, because a page has no run to pause:
 * the person is told to make the call from a chat, where it can wait for a decision.
 */
export async function emailOutbox(platform: Platform, principal: Principal | null) {
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

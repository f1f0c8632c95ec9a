/**
 * Connections (MCP servers) as admins manage them, and the bindings' declarations everyone with
 * apps.use can read. Thin: the App registry does the work; this layer checks who may do it.
 */
import { z } from "zod";
import { plainName } from "@/contracts/text";
import { declarations } from "../apps/declarations";
import type { Platform } from "../platform";
import { type Principal, requirePermission } from "./auth";
import { isConnectionConfigError } from "../apps/errors";
import { AppError, invalidInput, isAppError } from "./errors";

const policy = z.enum(["allow", "ask", "deny"], { error: 'a policy must be "allow", "ask" or "deny"' });
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
const policiesInput = z.record(z.string(), policy);

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
  return adminCall(() => platform.apps.add({ name: parsed.data.name, transport: parsed.data.transport as never }));
}

export async function updateConnection(platform: Platform, principal: Principal | null, id: string, input: unknown) {
  requirePermission(principal, "platform.admin");
  const parsed = updateInput.safeParse(input);
  if (!parsed.success) throw invalidInput(parsed.error.issues);
  return adminCall(() => platform.apps.update(id, parsed.data));
}

export async function removeConnection(platform: Platform, principal: Principal | null, id: string) {
  requirePermission(principal, "platform.admin");
  await adminCall(() => platform.apps.remove(id));
  return { ok: true as const };
}

export async function setPolicies(platform: Platform, principal: Principal | null, id: string, input: unknown) {
  requirePermission(principal, "platform.admin");
  const parsed = policiesInput.safeParse(input);
  if (!parsed.success) throw invalidInput(parsed.error.issues);
  return adminCall(() => platform.apps.setPolicies(id, parsed.data));
}

const codeApiInput = z.object({ query: z.string().max(200).optional(), connection: z.string().max(100).optional() });

/** TypeScript declarations of the bindings (openbot_code_api), filtered by word or connection. */
export async function codeApi(platform: Platform, principal: Principal | null, input: unknown): Promise<{ declarations: string }> {
  requirePermission(principal, "apps.use");
  const parsed = codeApiInput.safeParse(input ?? {});
  if (!parsed.success) throw invalidInput(parsed.error.issues);
  return { declarations: await declarations(platform.apps.tools(), { query: parsed.data.query || undefined, connection: parsed.data.connection || undefined }) };
}

/** The built-in Email app's outbox (its list-sent tool), for the UI. */
export async function emailOutbox(platform: Platform, principal: Principal | null) {
  requirePermission(principal, "apps.use");
  const entry = platform.apps.tools().find((t) => t.connectionId === "conn_email" && t.name === "list-sent");
  if (!entry) return { available: false as const, emails: [] };
  const result = await platform.apps.call(entry, {});
  const emails = ((result.structuredContent as { emails?: unknown[] } | undefined)?.emails ?? []) as {
    id: string;
    to: string;
    subject: string;
    body: string;
    sentAt: number | string;
  }[];
  return { available: true as const, emails };
}

/**
 * The vault (seed 001 "Geheimnisse nutzen"): programs use secrets without seeing them. A program sees
 * `vault.github.token` as the reference `⟦vault:github/token⟧`. A call whose arguments hold a reference
 * always needs a decision; only when it is sent does the server put the secret in, and only if the
 * entry allows that connection and tool (else VaultDenied, nothing sent). Every occurrence of the
 * secret in what the App answers is replaced by `⟦hidden:github/token⟧` before it is stored or returned.
 */
import { z } from "zod";
import type { ToolEntry } from "../apps/registry";
import type { Platform } from "../platform";
import { type Principal, requirePermission } from "./auth";
import { hasKind } from "../error-kind";
import { AppError, invalidInput } from "./errors";

export const REF_PATTERN = /\u27E6vault:([a-z0-9_-]+(?:\/[a-z0-9_-]+)*)\u27E7/g;
export const refOf = (name: string) => `\u27E6vault:${name}\u27E7`;
export const hiddenOf = (name: string) => `\u27E6hidden:${name}\u27E7`;

const target = z.object({
  connection: z.string({ error: "allow[].connection is required" }).min(1, "allow[].connection must not be empty"),
  tool: z.string({ error: "allow[].tool is required" }).min(1, "allow[].tool must not be empty"),
});
const nameSchema = z
  .string({ error: "name is required" })
  .regex(/^[a-z0-9_-]+(\/[a-z0-9_-]+)*$/, "name must be lowercase words separated by /, like github/token")
  .max(200, "name must be at most 200 characters");
/** A name from a URL or a call (rotate, remove): a 400 naming the field, never a database error. */
function checkName(name: string): void {
  const parsed = nameSchema.safeParse(name);
  if (!parsed.success) throw invalidInput(parsed.error.issues.map((i) => ({ ...i, path: ["name"] })));
}
const createInput = z.object({
  name: nameSchema,
  secret: z.string({ error: "secret is required" }).min(1, "secret must not be empty").max(16_384, "secret must be at most 16384 characters"),
  allow: z.array(target, { error: "allow must be a list of { connection, tool }" }).default([]),
});
const rotateInput = z.object({
  secret: z.string({ error: "secret is required" }).min(1, "secret must not be empty").max(16_384, "secret must be at most 16384 characters"),
  allow: z.array(target).optional(),
});

export interface VaultEntryView {
  name: string;
  /** How a program refers to it. */
  reference: string;
  allow: { connection: string; tool: string }[];
  createdAt: number;
  updatedAt: number;
}

interface Row {
  name: string;
  secret_enc: string;
  allow: string;
  created_at: string;
  updated_at: string;
}

const view = (r: Row): VaultEntryView => ({
  name: r.name,
  reference: refOf(r.name),
  allow: JSON.parse(r.allow) as VaultEntryView["allow"],
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

export async function listVault(platform: Platform, principal: Principal | null): Promise<VaultEntryView[]> {
  requirePermission(principal, "platform.admin");
  return (await platform.db.query<Row>("select * from vault_entries order by name")).map(view);
}

export async function addVaultEntry(platform: Platform, principal: Principal | null, input: unknown): Promise<VaultEntryView> {
  requirePermission(principal, "platform.admin");
  const parsed = createInput.safeParse(input);
  if (!parsed.success) throw invalidInput(parsed.error.issues);
  const { name, secret, allow } = parsed.data;
  const now = Date.now();
  const rows = await platform.db.query<Row>(
    "insert into vault_entries (name, secret_enc, allow, created_at, updated_at) values ($1, $2, $3, $4, $4) on conflict (name) do nothing returning *",
    [name, platform.seal(`vault_entries:${name}:secret`, JSON.stringify(secret)), JSON.stringify(allow), now],
  );
  if (!rows[0]) throw new AppError("CONFLICT", `name: an entry ${name} exists; rotate its secret instead.`);
  return view(rows[0]);
}

/** Replaces an entry's secret in place (and its targets when given). */
export async function rotateVaultEntry(platform: Platform, principal: Principal | null, name: string, input: unknown): Promise<VaultEntryView> {
  requirePermission(principal, "platform.admin");
  checkName(name);
  const parsed = rotateInput.safeParse(input);
  if (!parsed.success) throw invalidInput(parsed.error.issues);
  const rows = await platform.db.query<Row>(
    `update vault_entries set secret_enc = $2, allow = coalesce($3, allow), updated_at = $4 where name = $1 returning *`,
    [name, platform.seal(`vault_entries:${name}:secret`, JSON.stringify(parsed.data.secret)), parsed.data.allow ? JSON.stringify(parsed.data.allow) : null, Date.now()],
  );
  if (!rows[0]) throw new AppError("NOT_FOUND", "No such vault entry.");
  return view(rows[0]);
}

export async function removeVaultEntry(platform: Platform, principal: Principal | null, name: string): Promise<{ ok: true }> {
  requirePermission(principal, "platform.admin");
  checkName(name);
  const rows = await platform.db.query("delete from vault_entries where name = $1 returning name", [name]);
  if (!rows.length) throw new AppError("NOT_FOUND", "No such vault entry.");
  return { ok: true };
}

/** Names a program sees under `vault` (never the secrets). */
export async function vaultNames(platform: Platform): Promise<string[]> {
  return (await platform.db.query<{ name: string }>("select name from vault_entries order by name")).map((r) => r.name);
}

/** The entry names referenced anywhere in the arguments (also inside longer strings). */
export function referencedNames(argsJson: string): string[] {
  return [...new Set([...argsJson.matchAll(REF_PATTERN)].map((m) => m[1]!))];
}

const allows = (entry: VaultEntryView, tool: ToolEntry) =>
  entry.allow.some(
    (a) =>
      [tool.connectionId, tool.connectionSlug, tool.connectionName].includes(a.connection) &&
      [tool.name, tool.binding.split(".")[1], tool.binding].includes(a.tool),
  );

/** Why the references may not go to this tool, or null when all may. */
export async function vaultRefusal(platform: Platform, argsJson: string, tool: ToolEntry): Promise<string | null> {
  for (const name of referencedNames(argsJson)) {
    const row = (await platform.db.query<Row>("select * from vault_entries where name = $1", [name]))[0];
    if (!row) return `The vault has no entry ${name}.`;
    if (!allows(view(row), tool)) return `The vault entry ${name} may not be sent to ${tool.connectionName} / ${tool.name}.`;
  }
  return null;
}

export interface Substituted {
  args: unknown;
  /** Secret → hidden marker, for redacting what comes back. */
  secrets: { secret: string; hidden: string }[];
}

/** Puts the secrets in (at send time only). Throws if a reference may not go to this tool. */
export async function substituteSecrets(platform: Platform, argsJson: string, tool: ToolEntry): Promise<Substituted> {
  const names = referencedNames(argsJson);
  if (names.length === 0) return { args: JSON.parse(argsJson), secrets: [] };
  const refusal = await vaultRefusal(platform, argsJson, tool);
  if (refusal) throw new VaultDeniedError(refusal);
  const secrets: Substituted["secrets"] = [];
  const byRef = new Map<string, string>();
  for (const name of names) {
    const row = (await platform.db.query<Row>("select * from vault_entries where name = $1", [name]))[0]!;
    const secret = JSON.parse(platform.open(`vault_entries:${name}:secret`, row.secret_enc)) as string;
    byRef.set(refOf(name), secret);
    secrets.push({ secret, hidden: hiddenOf(name) });
  }
  const put = (value: unknown): unknown => {
    if (typeof value === "string") return value.replace(REF_PATTERN, (ref) => byRef.get(ref) ?? ref);
    if (Array.isArray(value)) return value.map(put);
    if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, put(v)]));
    return value;
  };
  return { args: put(JSON.parse(argsJson)), secrets };
}

/** Replaces every occurrence of each secret in strings anywhere in `value` (keys too). */
export function redact<T>(value: T, secrets: Substituted["secrets"]): T {
  if (secrets.length === 0) return value;
  const sorted = [...secrets].sort((a, b) => b.secret.length - a.secret.length);
  const text = (s: string) => sorted.reduce((acc, { secret, hidden }) => acc.split(secret).join(hidden), s);
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return text(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [text(k), walk(x)]));
    return v;
  };
  return walk(value) as T;
}

export class VaultDeniedError extends Error {
  override readonly name = "VaultDeniedError";
  readonly kind = "VaultDeniedError" as const;
}

export function isVaultDeniedError(value: unknown): value is VaultDeniedError {
  return hasKind(value, "VaultDeniedError");
}

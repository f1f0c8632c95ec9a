/**
 * The vault (seed 001 "Geheimnisse nutzen"): programs use secrets without seeing them. A program sees
 * `vault.github.token` as the reference `⟦vault:github/token⟧`. A call whose arguments hold a reference
 * always needs a decision; only when it is sent does the server put the secret in, and only if the
 * entry allows that connection and tool (else VaultDenied, nothing sent). Every occurrence of the
 * secret in what the App answers is replaced by `⟦hidden:github/token⟧` before it is stored or returned.
 *
 * Every App answer, error text and question is redacted against *every* entry's secret (`redactKnown`),
 * not only the ones its call referenced: a secret written into a storing App by one call cannot come
 * back in plain text from another call, run or person. An entry also says who may use it (users and/or
 * roles; default admins only): anyone else does not see its name and gets VaultDenied.
 */
import "server-only";
import { randomUUID } from "node:crypto";
import {
  type CreateVaultInput,
  MIN_SECRET_LENGTH,
  type RotateVaultInput,
  type VaultAccessInput,
} from "@/contracts/vault";
import type { ToolEntry } from "../apps/registry";
import { hasKind } from "../error-kind";
import type { Platform } from "../platform";
import { isAdmin, type Principal, requirePermission } from "./auth";
import type { ServiceContext } from "./context";
import { AppError } from "./errors";

export const REF_PATTERN = /\u27E6vault:([a-z0-9_-]+(?:\/[a-z0-9_-]+)*)\u27E7/g;
export const refOf = (name: string) => `\u27E6vault:${name}\u27E7`;
export const hiddenOf = (name: string) => `\u27E6hidden:${name}\u27E7`;

export { MIN_SECRET_LENGTH };

export interface VaultEntryView {
  name: string;
  /** How a program refers to it. */
  reference: string;
  allow: { connection: string; tool: string }[];
  /** Who may use it in a call (and see its name); default admins only. */
  usableBy: { users: string[]; roles: ("admin" | "member")[] };
  createdAt: number;
  updatedAt: number;
}

interface Row {
  name: string;
  secret_enc: string;
  allow: string;
  use_users: string;
  use_roles: string;
  created_at: string;
  updated_at: string;
}

const view = (r: Row): VaultEntryView => ({
  name: r.name,
  reference: refOf(r.name),
  allow: JSON.parse(r.allow) as VaultEntryView["allow"],
  usableBy: {
    users: JSON.parse(r.use_users) as string[],
    roles: JSON.parse(r.use_roles) as VaultEntryView["usableBy"]["roles"],
  },
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

export async function listVault({ platform, principal }: ServiceContext): Promise<VaultEntryView[]> {
  requirePermission(principal, "platform.admin");
  return (await platform.db.query<Row>("select * from vault_entries order by name")).map(view);
}

export async function addVaultEntry(
  { platform, principal }: ServiceContext,
  input: CreateVaultInput,
): Promise<VaultEntryView> {
  requirePermission(principal, "platform.admin");
  const { name, secret, allow } = input;
  checkTargets(platform, allow);
  const users = await knownUsers(platform, input.usableBy);
  const now = Date.now();
  const rows = await platform.db.query<Row>(
    `insert into vault_entries (name, secret_enc, allow, use_users, use_roles, created_at, updated_at) values ($1, $2, $3, $5, $6, $4, $4)
     on conflict (name) do nothing returning *`,
    [
      name,
      platform.seal(`vault_entries:${name}:secret`, JSON.stringify(secret)),
      JSON.stringify(allow),
      now,
      JSON.stringify(users.users),
      JSON.stringify(users.roles),
    ],
  );
  if (!rows[0]) throw new AppError("CONFLICT", `name: an entry ${name} exists; rotate its secret instead.`);
  return view(rows[0]);
}

/**
 * Each target names an App that exists (its id, slug or name) and, where the App's tools are known (it is
 * connected now), one of its tools (name, binding name or binding); an App that is not connected now is
 * taken at its word for the tool. A typo would leave the secret usable nowhere (every use VaultDenied), so
 * it is refused with the field and what exists.
 */
function checkTargets(platform: Platform, allow: readonly { connection: string; tool: string }[]): void {
  const connections = platform.apps.connections();
  const fields: { field: string; message: string }[] = [];
  allow.forEach((target, i) => {
    const conn = connections.find((c) => namesConnection(target, c));
    if (!conn) {
      const known = connections.map((c) => c.slug).join(", ") || "none";
      fields.push({
        field: `allow[${i}].connection`,
        message: `there is no App ${JSON.stringify(target.connection)} (Apps: ${known})`,
      });
      return;
    }
    if (conn.status !== "connected" || conn.tools.length === 0) return;
    if (conn.tools.some((t) => namesTool(target, t))) return;
    fields.push({
      field: `allow[${i}].tool`,
      message: `${conn.name} has no tool ${JSON.stringify(target.tool)} (its tools: ${conn.tools.map((t) => t.name).join(", ")})`,
    });
  });
  if (fields.length > 0)
    throw new AppError("BAD_REQUEST", fields.map((f) => `${f.field}: ${f.message}`).join("; "), { fields });
}

/** Replaces an entry's secret in place (and its targets when given). */
export async function rotateVaultEntry(
  { platform, principal }: ServiceContext,
  input: RotateVaultInput,
): Promise<VaultEntryView> {
  requirePermission(principal, "platform.admin");
  const { name } = input;
  if (input.allow) checkTargets(platform, input.allow);
  const users = input.usableBy ? await knownUsers(platform, input.usableBy) : null;
  await retire(platform, name);
  const rows = await platform.db.query<Row>(
    `update vault_entries set secret_enc = $2, allow = coalesce($3, allow), use_users = coalesce($5, use_users), use_roles = coalesce($6, use_roles), updated_at = $4
     where name = $1 returning *`,
    [
      name,
      platform.seal(`vault_entries:${name}:secret`, JSON.stringify(input.secret)),
      input.allow ? JSON.stringify(input.allow) : null,
      Date.now(),
      users ? JSON.stringify(users.users) : null,
      users ? JSON.stringify(users.roles) : null,
    ],
  );
  if (!rows[0]) throw new AppError("NOT_FOUND", "No such vault entry.");
  return view(rows[0]);
}

/** Sets who may use an entry, without touching its secret: `{ usableBy: { users?, roles? } }`. */
export async function setVaultAccess(
  { platform, principal }: ServiceContext,
  input: VaultAccessInput,
): Promise<VaultEntryView> {
  requirePermission(principal, "platform.admin");
  const { name } = input;
  const users = await knownUsers(platform, input.usableBy);
  const rows = await platform.db.query<Row>(
    "update vault_entries set use_users = $2, use_roles = $3, updated_at = $4 where name = $1 returning *",
    [name, JSON.stringify(users.users), JSON.stringify(users.roles), Date.now()],
  );
  if (!rows[0]) throw new AppError("NOT_FOUND", "No such vault entry.");
  return view(rows[0]);
}

/** Keeps the entry's current secret so App answers go on hiding it after a rotation or deletion. */
async function retire(platform: Platform, name: string): Promise<void> {
  const row = (await platform.db.query<Row>("select * from vault_entries where name = $1", [name]))[0];
  if (!row) return;
  const id = `vrs_${randomUUID()}`;
  const secret = platform.open(`vault_entries:${name}:secret`, row.secret_enc);
  await platform.db.query(
    "insert into vault_retired_secrets (id, name, secret_enc, retired_at) values ($1, $2, $3, $4)",
    [id, name, platform.seal(`vault_retired_secrets:${id}:secret`, secret), Date.now()],
  );
}

/** The listed users must exist and not be removed (a typo would silently lock everyone out). */
async function knownUsers(platform: Platform, input: VaultEntryView["usableBy"]): Promise<VaultEntryView["usableBy"]> {
  const users = [...new Set(input.users)];
  if (users.length) {
    const found = new Set(
      (
        await platform.db.query<{ id: string }>("select id from users where id = any($1) and removed_at is null", [
          users,
        ])
      ).map((r) => r.id),
    );
    const missing = users.filter((u) => !found.has(u));
    if (missing.length)
      throw new AppError("BAD_REQUEST", `usableBy.users: no such user ${missing.join(", ")}`, {
        fields: [{ field: "usableBy.users", message: `no such user ${missing.join(", ")}` }],
      });
  }
  return { users, roles: [...new Set(input.roles)] };
}

/**
 * Whether this person may use the entry in a call (and see its name). A key counts as its user's role
 * only as far as it holds that role's power: an admin's key without platform.admin (an integration's) is
 * a member's key here, as everywhere else (`isAdmin`).
 */
export function mayUse(entry: Pick<VaultEntryView, "usableBy">, principal: Principal): boolean {
  const role = principal.role === "admin" && !isAdmin(principal) ? "member" : principal.role;
  return entry.usableBy.roles.includes(role) || entry.usableBy.users.includes(principal.userId);
}

export async function removeVaultEntry(
  { platform, principal }: ServiceContext,
  { name }: { name: string },
): Promise<{ ok: true }> {
  requirePermission(principal, "platform.admin");
  await retire(platform, name);
  const rows = await platform.db.query("delete from vault_entries where name = $1 returning name", [name]);
  if (!rows.length) throw new AppError("NOT_FOUND", "No such vault entry.");
  return { ok: true };
}

/** Names a program of this person sees under `vault` (never the secrets): only entries they may use. */
export async function vaultNames(platform: Platform, principal: Principal): Promise<string[]> {
  return (await platform.db.query<Row>("select * from vault_entries order by name"))
    .map(view)
    .filter((e) => mayUse(e, principal))
    .map((e) => e.name);
}

/** The entry names referenced anywhere in the arguments (also inside longer strings). */
export function referencedNames(argsJson: string): string[] {
  return [...new Set([...argsJson.matchAll(REF_PATTERN)].map((m) => m[1]!))];
}

/** A target names a connection by its id, slug or name, and a tool by its name, binding name or binding. */
const namesConnection = (target: { connection: string }, c: { id: string; slug: string; name: string }) =>
  [c.id, c.slug, c.name].includes(target.connection);
const namesTool = (target: { tool: string }, t: { name: string; binding: string }) =>
  [t.name, t.binding.split(".")[1], t.binding].includes(target.tool);

const allows = (entry: VaultEntryView, tool: ToolEntry) =>
  entry.allow.some(
    (a) =>
      namesConnection(a, { id: tool.connectionId, slug: tool.connectionSlug, name: tool.connectionName }) &&
      namesTool(a, tool),
  );

/**
 * Why the references may not go to this tool for this person, or null when all may. An entry the
 * person may not use reads exactly like a missing one.
 */
export async function vaultRefusal(
  platform: Platform,
  argsJson: string,
  tool: ToolEntry,
  principal: Principal,
): Promise<string | null> {
  for (const name of referencedNames(argsJson)) {
    const row = (await platform.db.query<Row>("select * from vault_entries where name = $1", [name]))[0];
    if (!row || !mayUse(view(row), principal)) return `The vault has no entry ${name} you may use.`;
    if (!allows(view(row), tool))
      return `The vault entry ${name} may not be sent to ${tool.connectionName} / ${tool.name}.`;
  }
  return null;
}

export interface Substituted {
  args: unknown;
  /** Secret → hidden marker, for redacting what comes back. */
  secrets: { secret: string; hidden: string }[];
}

/** Puts the secrets in (at send time only). Throws if a reference may not go to this tool or person. */
export async function substituteSecrets(
  platform: Platform,
  argsJson: string,
  tool: ToolEntry,
  principal: Principal,
): Promise<Substituted> {
  const names = referencedNames(argsJson);
  if (names.length === 0) return { args: JSON.parse(argsJson), secrets: [] };
  const refusal = await vaultRefusal(platform, argsJson, tool, principal);
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
    if (value && typeof value === "object")
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, put(v)]));
    return value;
  };
  return { args: put(JSON.parse(argsJson)), secrets };
}

interface SecretCache {
  fingerprint: string;
  secrets: Substituted["secrets"];
}
/** Decrypted secret sets by platform, on globalThis: route handlers and instrumentation are separate module graphs. */
const cacheHolder = globalThis as { __openbotVaultSecrets?: WeakMap<Platform, SecretCache> };
cacheHolder.__openbotVaultSecrets ??= new WeakMap();
const caches: WeakMap<Platform, SecretCache> = cacheHolder.__openbotVaultSecrets;

/**
 * A digest of every entry's and retired secret's id and ciphertext, as one SQL value: another statement
 * can carry it (`performAppCall` reads it with its operation's insert) and hand it to `knownSecrets`.
 */
export const VAULT_FINGERPRINT = `(select md5(coalesce(string_agg(s.id || ':' || s.digest, E'\\n' order by s.id), ''))
  from (select 'e:' || name as id, md5(secret_enc) as digest from vault_entries
        union all select 'r:' || id, md5(secret_enc) from vault_retired_secrets) s)`;

/**
 * Every entry's secret (and every rotated-out or deleted one) with its marker. Decrypted once and kept
 * until the vault changes: each call reads only the rows' ids and a digest of their ciphertexts (a
 * rotation reseals, so the digest moves), which also notices changes made by another instance.
 * `fingerprint`: VAULT_FINGERPRINT as another statement just read it (else it is read here).
 */
export async function knownSecrets(platform: Platform, fingerprint?: string): Promise<Substituted["secrets"]> {
  fingerprint ??= (await platform.db.query<{ fingerprint: string }>(`select ${VAULT_FINGERPRINT} as fingerprint`))[0]!
    .fingerprint;
  const cached = caches.get(platform);
  if (cached?.fingerprint === fingerprint) return cached.secrets;
  const current = await platform.db.query<{ name: string; secret_enc: string }>(
    "select name, secret_enc from vault_entries",
  );
  const retired = await platform.db.query<{ id: string; name: string; secret_enc: string }>(
    "select id, name, secret_enc from vault_retired_secrets",
  );
  const secrets = [
    ...current.map((r) => ({
      secret: JSON.parse(platform.open(`vault_entries:${r.name}:secret`, r.secret_enc)) as string,
      hidden: hiddenOf(r.name),
    })),
    ...retired.map((r) => ({
      secret: JSON.parse(platform.open(`vault_retired_secrets:${r.id}:secret`, r.secret_enc)) as string,
      hidden: hiddenOf(r.name),
    })),
  ].filter((s) => s.secret.length > 0);
  caches.set(platform, { fingerprint, secrets });
  return secrets;
}

/** The fingerprint `knownSecrets` last decrypted the vault at (undefined: not yet); a read sent before any write redacts with it and writes only while it holds (code-runs/reads.ts). */
export function cachedVaultFingerprint(platform: Platform): string | undefined {
  return caches.get(platform)?.fingerprint;
}

/** `redact` against every secret the vault knows (see `knownSecrets`). */
export async function redactKnown<T>(platform: Platform, value: T): Promise<T> {
  return redact(value, await knownSecrets(platform));
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

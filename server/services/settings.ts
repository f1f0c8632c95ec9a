/**
 * Platform settings: one versioned row. A change names the version it was made against; a stale
 * version is a conflict that returns the current settings and changes nothing. The model's API key is
 * write-only: stored encrypted in platform_secrets, and the settings only say whether one is set.
 */
import "server-only";
import {
  DEFAULT_CODE_MODE,
  type ModelSettingsView,
  type PlatformSettings,
  type SettingsPatch,
  sameModelEndpoint,
} from "@/contracts/settings";
import { canonicalJsonOf } from "@/worker/canonical-json";
import type { Db } from "../db/client";
import { type Principal, requirePermission } from "./auth";
import type { ServiceContext } from "./context";
import { AppError } from "./errors";

interface Row {
  version: number;
  data: string;
  updated_at: string | number;
}

type StoredModel = Omit<ModelSettingsView, "apiKeySet">;
interface StoredData {
  codeMode?: Partial<PlatformSettings["codeMode"]>;
  model?: StoredModel | null;
}

/** Seals a secret for storage (the platform's key ring); needed only when a patch sets an API key. */
export type Sealer = (aad: string, plaintext: string) => string;

const API_KEY = "model.apiKey";

export async function readSettings(db: Db): Promise<PlatformSettings> {
  const rows = await db.query<Row>("select version, data, updated_at from platform_settings where id = 1");
  const row = rows[0];
  if (!row) {
    await db.query(
      "insert into platform_settings (id, version, data, updated_at) values (1, 1, $1, $2) on conflict (id) do nothing",
      [JSON.stringify({ codeMode: DEFAULT_CODE_MODE, model: null }), Date.now()],
    );
    return readSettings(db);
  }
  const data = JSON.parse(row.data) as StoredData;
  const keySet = data.model
    ? (await db.query("select 1 from platform_secrets where name = $1", [API_KEY])).length > 0
    : false;
  return {
    version: row.version,
    codeMode: { ...DEFAULT_CODE_MODE, ...data.codeMode },
    model: data.model ? { ...data.model, apiKeySet: keySet } : null,
    updatedAt: Number(row.updated_at),
  };
}

/** The stored model API key, decrypted (server-side use only). */
export async function readModelApiKey(
  db: Db,
  open: (aad: string, value: string) => string,
): Promise<string | undefined> {
  const row = (
    await db.query<{ value_enc: string }>("select value_enc from platform_secrets where name = $1", [API_KEY])
  )[0];
  return row ? open(`platform_secrets:${API_KEY}:value`, row.value_enc) : undefined;
}

export async function getSettings(ctx: ServiceContext): Promise<PlatformSettings> {
  requirePermission(ctx.principal, "platform.admin");
  return readSettings(ctx.platform.db);
}

/** An admin's change (tRPC `settings.update`, `PATCH /v1/platform/settings`). */
export async function updateSettings(ctx: ServiceContext, patch: SettingsPatch): Promise<PlatformSettings> {
  const next = await writeSettings(ctx.platform.db, ctx.principal, patch, ctx.platform.seal);
  // Applied here at once, and by every other instance when it hears the event (server/platform.ts).
  ctx.platform.admission.apply(next.codeMode);
  ctx.platform.events.emit("settings-changed", { version: next.version });
  return next;
}

function conflict(current: PlatformSettings): AppError {
  return new AppError("CONFLICT", `The settings changed meanwhile: they are at version ${current.version}.`, {
    currentVersion: current.version,
    current,
  });
}

/** Applies a checked patch on a database (also used without a platform, by the storage tests). */
export async function writeSettings(
  db: Db,
  principal: Principal | null,
  patch: SettingsPatch,
  seal?: Sealer,
): Promise<PlatformSettings> {
  requirePermission(principal, "platform.admin");
  const current = await readSettings(db);
  if (current.version !== patch.expectedVersion) throw conflict(current);
  const stored = JSON.parse(
    (await db.query<Row>("select data from platform_settings where id = 1"))[0]!.data,
  ) as StoredData;
  const next: StoredData = { codeMode: { ...current.codeMode, ...patch.codeMode }, model: stored.model ?? null };
  if (patch.model !== undefined) {
    next.model = patch.model
      ? { provider: patch.model.provider, baseURL: patch.model.baseURL, model: patch.model.model }
      : null;
  }
  // A stored key goes only where it was entered for: a new provider or base URL without a new key forgets it.
  const moved = !!patch.model && !sameModelEndpoint(stored.model, patch.model);
  const apiKey = patch.model === null ? "" : (patch.model?.apiKey ?? (moved ? "" : undefined));
  if (apiKey && !seal) throw new AppError("UNAVAILABLE", "The API key cannot be stored: no encryption key is loaded.");
  // Nothing changes: no new version (another tab's next save would be refused as stale for nothing).
  const storedNow: StoredData = { codeMode: { ...current.codeMode }, model: stored.model ?? null };
  if (apiKey === undefined && canonicalJsonOf(next) === canonicalJsonOf(storedNow)) return current;
  return db.transaction(async (tx) => {
    const rows = await tx.query<{ version: number }>(
      "update platform_settings set version = version + 1, data = $1, updated_at = $2 where id = 1 and version = $3 returning version",
      [JSON.stringify(next), Date.now(), patch.expectedVersion],
    );
    if (!rows[0]) throw conflict(await readSettings(tx));
    if (apiKey === "") await tx.query("delete from platform_secrets where name = $1", [API_KEY]);
    else if (apiKey && seal) {
      await tx.query(
        `insert into platform_secrets (name, value_enc, updated_at) values ($1, $2, $3)
         on conflict (name) do update set value_enc = excluded.value_enc, updated_at = excluded.updated_at`,
        [API_KEY, seal(`platform_secrets:${API_KEY}:value`, apiKey), Date.now()],
      );
    }
    return readSettings(tx);
  });
}

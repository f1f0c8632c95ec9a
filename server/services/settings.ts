/**
 * Platform settings: one versioned row. A change names the version it was made against; a stale
 * version is a conflict that returns the current settings and changes nothing.
 */
import { DEFAULT_CODE_MODE, type PlatformSettings, settingsPatchSchema } from "@/contracts/settings";
import type { Db } from "../db/client";
import { type Principal, requirePermission } from "./auth";
import { AppError, invalidInput } from "./errors";

interface Row {
  version: number;
  data: string;
  updated_at: string | number;
}

export async function readSettings(db: Db): Promise<PlatformSettings> {
  const rows = await db.query<Row>("select version, data, updated_at from platform_settings where id = 1");
  const row = rows[0];
  if (!row) {
    const now = Date.now();
    await db.query(
      "insert into platform_settings (id, version, data, updated_at) values (1, 1, $1, $2) on conflict (id) do nothing",
      [JSON.stringify({ codeMode: DEFAULT_CODE_MODE }), now],
    );
    return readSettings(db);
  }
  const data = JSON.parse(row.data) as { codeMode?: Partial<PlatformSettings["codeMode"]> };
  return {
    version: row.version,
    codeMode: { ...DEFAULT_CODE_MODE, ...data.codeMode },
    updatedAt: Number(row.updated_at),
  };
}

export async function getSettings(db: Db, principal: Principal | null): Promise<PlatformSettings> {
  requirePermission(principal, "platform.admin");
  return readSettings(db);
}

export async function updateSettings(db: Db, principal: Principal | null, input: unknown): Promise<PlatformSettings> {
  requirePermission(principal, "platform.admin");
  const parsed = settingsPatchSchema.safeParse(input);
  if (!parsed.success) throw invalidInput(parsed.error.issues);
  const patch = parsed.data;
  const current = await readSettings(db);
  if (current.version !== patch.expectedVersion) {
    throw new AppError("CONFLICT", `The settings changed meanwhile: they are at version ${current.version}.`, {
      currentVersion: current.version,
      current,
    });
  }
  const next = { codeMode: { ...current.codeMode, ...patch.codeMode } };
  const rows = await db.query<{ version: number }>(
    "update platform_settings set version = version + 1, data = $1, updated_at = $2 where id = 1 and version = $3 returning version",
    [JSON.stringify(next), Date.now(), patch.expectedVersion],
  );
  if (!rows[0]) {
    const latest = await readSettings(db);
    throw new AppError("CONFLICT", `The settings changed meanwhile: they are at version ${latest.version}.`, {
      currentVersion: latest.version,
      current: latest,
    });
  }
  return readSettings(db);
}

/**
 * Loads the encryption key ring: OPENBOT_ENCRYPTION_KEY when set, else a key generated once into
 * `<data dir>/encryption-key` with mode 0600. Older keys (OPENBOT_OLD_ENCRYPTION_KEYS, or the
 * `encryption-key.old` files a rotation leaves) still decrypt.
 */
import "server-only";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { type KeyRing, makeKeyRing, parseKey } from "./crypto";
import type { Env } from "./env";

export function loadKeyRing(env: Env): KeyRing {
  const older = (env.OPENBOT_OLD_ENCRYPTION_KEYS ?? "")
    .split(",")
    .filter((s) => s.trim())
    .map(parseKey);
  older.push(...readOldKeyFiles(env.dataDir));
  if (env.OPENBOT_ENCRYPTION_KEY) return makeKeyRing(parseKey(env.OPENBOT_ENCRYPTION_KEY), older);
  const file = path.join(env.dataDir, "encryption-key");
  if (!existsSync(file)) {
    mkdirSync(env.dataDir, { recursive: true });
    writeFileSync(file, `${randomBytes(32).toString("hex")}\n`, { mode: 0o600, flag: "wx" });
  }
  return makeKeyRing(parseKey(readFileSync(file, "utf8")), older);
}

function readOldKeyFiles(dataDir: string): Buffer[] {
  if (!existsSync(dataDir)) return [];
  return readdirSync(dataDir)
    .filter((name) => name.startsWith("encryption-key.old"))
    .map((name) => parseKey(readFileSync(path.join(dataDir, name), "utf8")));
}

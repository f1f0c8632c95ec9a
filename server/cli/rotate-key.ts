/**
 * `npm run openbot -- rotate-key`: re-encrypts every stored value with a new key. The old key stays
 * readable (as `<data dir>/encryption-key.old-<id>`, or in OPENBOT_OLD_ENCRYPTION_KEYS when keys come
 * from the environment) until every value has moved.
 */
import "server-only";
import { randomBytes } from "node:crypto";
import { renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { decrypt, encrypt, type KeyRing, keyId, makeKeyRing, valueKeyId } from "../crypto";
import type { Db } from "../db/client";
import { ENCRYPTED_COLUMNS } from "../db/encrypted-columns";

/** Re-encrypts every value not yet under `next.currentId`; returns how many values moved. */
export async function reencryptAll(db: Db, next: KeyRing): Promise<number> {
  let moved = 0;
  for (const col of ENCRYPTED_COLUMNS) {
    const rows = await db.query<{ rid: string; value: string }>(
      `select ${col.idSql} as rid, ${col.column} as value from ${col.table} where ${col.column} is not null`,
    );
    for (const row of rows) {
      if (valueKeyId(row.value) === next.currentId) continue;
      const aad = `${col.table}:${row.rid}:${col.field}`;
      const sealed = encrypt(next, decrypt(next, row.value, aad), aad);
      await db.query(`update ${col.table} set ${col.column} = $1 where ${col.whereSql}`, [sealed, row.rid]);
      moved++;
    }
  }
  return moved;
}

/** Rotates the data dir's key file: new key in place, the old one kept beside it. */
export async function rotateKeyFile(
  db: Db,
  dataDir: string,
  current: KeyRing,
): Promise<{ newKeyId: string; moved: number }> {
  const fresh = randomBytes(32);
  const ring = makeKeyRing(fresh, [...current.keys.values()]);
  const moved = await reencryptAll(db, ring);
  const file = path.join(dataDir, "encryption-key");
  const oldKey = current.keys.get(current.currentId)!;
  writeFileSync(path.join(dataDir, `encryption-key.old-${keyId(oldKey)}`), `${oldKey.toString("hex")}\n`, {
    mode: 0o600,
  });
  writeFileSync(`${file}.new`, `${fresh.toString("hex")}\n`, { mode: 0o600 });
  renameSync(`${file}.new`, file);
  return { newKeyId: keyId(fresh), moved };
}

/**
 * Encryption at rest: AES-256-GCM with a fresh 12-byte IV per value and the key id written on each
 * value, so keys can rotate (`enc1:<keyId>:<iv>:<ciphertext+tag>`, base64url). The associated data
 * binds a value to its place (table, row, column): a value copied to another row does not decrypt.
 */
import "server-only";
import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from "node:crypto";

export interface KeyRing {
  /** The key id new values are written with. */
  currentId: string;
  keys: Map<string, Buffer>;
}

const PREFIX = "enc1";
const IV_BYTES = 12;
/** IVs drawn from the CSPRNG this many at a time: one `randomBytes` per seal cost as much as the cipher. */
const IVS_PER_DRAW = 256;
let ivPool = Buffer.alloc(0);
let ivNext = 0;

/** A fresh IV: the next unused 12 bytes of a pooled CSPRNG draw (each handed out once, then never again). */
function freshIv(): Buffer {
  if (ivNext + IV_BYTES > ivPool.length) {
    ivPool = randomBytes(IV_BYTES * IVS_PER_DRAW);
    ivNext = 0;
  }
  const iv = Buffer.from(ivPool.subarray(ivNext, ivNext + IV_BYTES));
  ivNext += IV_BYTES;
  return iv;
}

export function keyId(key: Buffer): string {
  return createHash("sha256").update(key).digest("base64url").slice(0, 8);
}

export function parseKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-f]{64}$/i.test(trimmed) ? Buffer.from(trimmed, "hex") : Buffer.from(trimmed, "base64");
  if (key.length !== 32) throw new Error("an encryption key must be 32 bytes, as 64 hex digits or base64");
  return key;
}

export function makeKeyRing(current: Buffer, older: Buffer[] = []): KeyRing {
  const keys = new Map<string, Buffer>();
  for (const k of [current, ...older]) keys.set(keyId(k), k);
  return { currentId: keyId(current), keys };
}

export function encrypt(ring: KeyRing, plaintext: string, aad: string): string {
  const key = ring.keys.get(ring.currentId)!;
  const iv = freshIv();
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(aad, "utf8"));
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
  return `${PREFIX}:${ring.currentId}:${iv.toString("base64url")}:${body.toString("base64url")}`;
}

export function decrypt(ring: KeyRing, value: string, aad: string): string {
  const [prefix, id, ivText, bodyText] = value.split(":");
  if (prefix !== PREFIX || !id || !ivText || !bodyText) throw new Error("not an encrypted value");
  const key = ring.keys.get(id);
  if (!key) throw new Error(`no key with id ${id} to decrypt this value`);
  const body = Buffer.from(bodyText, "base64url");
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(ivText, "base64url"));
  decipher.setAAD(Buffer.from(aad, "utf8"));
  decipher.setAuthTag(body.subarray(body.length - 16));
  return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString("utf8");
}

/** The key id a stored value was written with. */
export function valueKeyId(value: string): string | undefined {
  const [prefix, id] = value.split(":");
  return prefix === PREFIX ? id : undefined;
}

export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

export function randomToken(prefix: string): string {
  return `${prefix}_${randomBytes(24).toString("base64url")}`;
}

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

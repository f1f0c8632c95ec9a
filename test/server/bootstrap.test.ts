/**
 * First start: an admin token is created, written to <data dir>/admin-token with mode 0600 and stored
 * only as a hash; OPENBOT_ADMIN_TOKEN is an admin key, idempotent across restarts; sign-in gives a
 * session that resolves to the same person.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sha256 } from "@/server/crypto";
import { openDb } from "@/server/db/client";
import { migrate } from "@/server/db/migrate";
import { authenticate, bootstrapAdmin, principalFromToken, SESSION_COOKIE, signIn } from "@/server/services/auth";
import { BACKENDS } from "../helpers/databases";

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(path.join(tmpdir(), "openbot-boot-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function filesContaining(dir: string, needle: string): string[] {
  const hits: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = path.join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (readFileSync(p).includes(Buffer.from(needle))) hits.push(path.relative(dir, p));
    }
  };
  walk(dir);
  return hits;
}

describe("admin bootstrap", () => {
  it("creates a token once, writes it with mode 0600 and stores only its hash", async () => {
    const dataDir = tempDir();
    const dbDir = path.join(dataDir, "pglite");
    const db = await openDb({ dataDir: dbDir });
    await migrate(db);
    const first = await bootstrapAdmin(db, dataDir);
    expect(first.createdToken).toMatch(/^obk_/);
    const file = path.join(dataDir, "admin-token");
    expect(readFileSync(file, "utf8").trim()).toBe(first.createdToken);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const principal = await principalFromToken(db, first.createdToken!);
    expect(principal?.role).toBe("admin");
    expect(principal?.permissions.has("platform.admin")).toBe(true);
    const stored = await db.query<{ token_hash: string }>("select token_hash from api_keys");
    expect(stored.map((r) => r.token_hash)).toEqual([sha256(first.createdToken!)]);

    const second = await bootstrapAdmin(db, dataDir);
    expect(second.createdToken).toBeUndefined();
    await db.close();
    expect(filesContaining(dbDir, first.createdToken!)).toEqual([]);
  });

  it("takes OPENBOT_ADMIN_TOKEN as an admin key, idempotently", async () => {
    const dataDir = tempDir();
    const db = await openDb({});
    await migrate(db);
    const token = "fixed-admin-token-for-this-test";
    await bootstrapAdmin(db, dataDir, token);
    await bootstrapAdmin(db, dataDir, token);
    expect(await db.query("select * from api_keys")).toHaveLength(1);
    expect((await principalFromToken(db, token))?.role).toBe("admin");
    expect(readdirSync(dataDir)).not.toContain("admin-token");

    const { sessionId } = await signIn(db, token);
    const viaCookie = await authenticate(db, { cookie: `other=1; ${SESSION_COOKIE}=${encodeURIComponent(sessionId)}` });
    expect(viaCookie?.role).toBe("admin");
    expect(await authenticate(db, { cookie: `${SESSION_COOKIE}=forged` })).toBeNull();
    expect(await authenticate(db, { authorization: "Bearer wrong" })).toBeNull();
    await expect(signIn(db, "wrong")).rejects.toThrow("not valid");
    await db.close();
  });

  // Postgres only: two PGlite handles are two databases (one process owns an embedded one).
  for (const backend of BACKENDS.filter((b) => b.name === "postgres")) {
    it(`two instances starting at once on a fresh ${backend.name} database make one admin and one key each way`, async () => {
      const fresh = await backend.fresh();
      const [a, b] = [await fresh.open(), await fresh.open()];
      try {
        await migrate(a);
        // The same OPENBOT_ADMIN_TOKEN on both: neither start fails on the other's insert.
        await Promise.all([a, b].map((db) => bootstrapAdmin(db, tempDir(), "obt_shared_admin_token_0123456789")));
        const fixed = await a.query("select count(*)::int as n from api_keys where name = 'OPENBOT_ADMIN_TOKEN'");
        expect(fixed[0]).toEqual({ n: 1 });
        // No fixed token, a fresh database again: only one of them creates (and prints) a first token.
        await a.query("delete from api_keys");
        await a.query("delete from users");
        const created = await Promise.all([a, b].map((db) => bootstrapAdmin(db, tempDir())));
        expect(created.filter((c) => c.createdToken).length).toBe(1);
        const admins = await a.query("select count(*)::int as n from users where role = 'admin'");
        expect(admins[0]).toEqual({ n: 1 });
      } finally {
        await Promise.all([a.close(), b.close()]);
        await fresh.drop();
      }
    });
  }
});

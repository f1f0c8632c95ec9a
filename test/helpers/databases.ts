/**
 * The database engines storage tests run against: PGlite always, Postgres when
 * OPENBOT_TEST_DATABASE_URL points at a server (.ci/run starts one). Each Postgres use gets a fresh
 * database, dropped afterwards.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { type Db, openDb } from "@/server/db/client";

export interface Backend {
  name: "pglite" | "postgres";
  /** A fresh, empty database: its URL (postgres) or undefined (pglite), and a cleanup. */
  fresh(): Promise<{ url?: string; open(): Promise<Db>; drop(): Promise<void> }>;
}

const postgresUrl = process.env.OPENBOT_TEST_DATABASE_URL;

export const BACKENDS: Backend[] = [
  {
    name: "pglite",
    async fresh() {
      return { open: () => openDb({}), drop: async () => undefined };
    },
  },
];

if (postgresUrl) {
  BACKENDS.push({
    name: "postgres",
    async fresh() {
      const name = `openbot_test_${randomBytes(6).toString("hex")}`;
      const admin = new pg.Client({ connectionString: postgresUrl });
      await admin.connect();
      await admin.query(`create database ${name}`);
      await admin.end();
      const url = new URL(postgresUrl);
      url.pathname = `/${name}`;
      return {
        url: url.toString(),
        open: () => openDb({ url: url.toString() }),
        async drop() {
          const c = new pg.Client({ connectionString: postgresUrl });
          await c.connect();
          await c.query(`drop database if exists ${name} with (force)`);
          await c.end();
        },
      };
    },
  });
} else {
  console.log("OPENBOT_TEST_DATABASE_URL is not set: the Postgres runs of the storage tests are skipped.");
}

/**
 * A fresh database on `backend`, opened; its close and drop are pushed onto `cleanup` (run them in an
 * afterEach, last in first out).
 */
export async function openFresh(backend: Backend, cleanup: (() => Promise<unknown>)[]): Promise<Db> {
  const fresh = await backend.fresh();
  const db = await fresh.open();
  cleanup.push(() => fresh.drop());
  cleanup.push(() => db.close());
  return db;
}

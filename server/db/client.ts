/**
 * One database interface over two engines: PGlite (embedded, files in the data dir, run in its own worker
 * thread: pglite-remote.ts) by default, and real Postgres when DATABASE_URL is set. Services speak plain SQL with $1 parameters to `Db`; both engines
 * run the same schema and migrations.
 */
import "server-only";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { logEvent } from "../log";
import { checkChannel, joinChannel, PLAN_CHANGED } from "./pglite-protocol";
import { openPgliteThread } from "./pglite-remote";

export interface Db {
  readonly kind: "pglite" | "postgres";
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs `fn` in one transaction; keep it short (PGlite serialises everything behind it). */
  transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T>;
  /**
   * Calls `handler` with each NOTIFY payload on `channel` (every instance on this database hears it;
   * PGlite: the one process). On Postgres a dedicated connection listens and reconnects after a loss.
   */
  listen(channel: string, handler: (payload: string) => void): Promise<void>;
  /** Sends `payload` (at most ~7,900 bytes) to every listener of `channel`, this instance's included. */
  notify(channel: string, payload: string): Promise<void>;
  close(): Promise<void>;
  /** Connections of this process's pool now (PGlite: its one connection; `waiting`: statements queued). */
  pool(): PoolState;
  /** What this process has asked of the database since it opened (bench:load divides them by nested calls). */
  stats(): DbStats;
}

/**
 * Cumulative counts: `statements` every SQL statement a service sent (inside transactions too);
 * `transactions` each `transaction()`; `roundTrips` each trip to the engine (a statement, and a
 * transaction's begin and commit/rollback; PGlite: one call into its WebAssembly each).
 */
export interface DbStats {
  statements: number;
  transactions: number;
  roundTrips: number;
}

const newStats = (): DbStats => ({ statements: 0, transactions: 0, roundTrips: 0 });

export interface PoolState {
  open: number;
  idle: number;
  waiting: number;
  max: number;
}

/**
 * Whether an error means the database could not be reached or went away (a restart, a lost connection),
 * by its shape: SQLSTATE class 08 (connection), 57 (operator intervention: shutdown, cannot connect now),
 * 53 (resources), a socket error, or node-postgres' own words for a connection it lost or could not make:
 * "Connection terminated…", "…is not queryable" (a client whose connection failed mid-transaction), the
 * pool's "timeout exceeded when trying to connect". Only the error itself is looked at, not its `cause`:
 * an App's failed fetch carries a socket error as its cause, and that is not the database.
 */
export function isStorageUnavailable(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === "string" && /^(08|57|53)[0-9A-Z]{3}$/.test(code)) return true;
  if (typeof code === "string" && /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|ENOTFOUND|EHOSTUNREACH)$/.test(code))
    return true;
  return typeof message === "string" && CONNECTION_LOST.test(message);
}

const CONNECTION_LOST =
  /Connection terminated|connection (is )?(closed|ended)|encountered a connection error and is not queryable|Client was closed and is not queryable|timeout exceeded when trying to connect/i;

export interface OpenDbOptions {
  /** postgres://… — when set, Postgres is used and `dataDir` is ignored. */
  url?: string;
  /** Folder for PGlite's files; `undefined` keeps the database in memory (tests). */
  dataDir?: string;
}

export async function openDb(options: OpenDbOptions): Promise<Db> {
  if (options.url) return openPostgres(options.url);
  // An in-memory database (only tests make them) starts from the dump the test setup made, when there is one.
  const template = process.env.OPENBOT_TEST_PGLITE_TEMPLATE;
  const usable = !options.dataDir && template && existsSync(template) ? template : undefined;
  return openPgliteThread(options.dataDir, undefined, usable);
}

const POOL_MAX = 10;

interface Queryable {
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

/** Statement texts that run as named prepared statements (each connection prepares one once). */
const MAX_NAMED = 500;
const names = new Map<string, string>();

/**
 * The name a statement with parameters is prepared under on every connection (Postgres plans it once
 * per connection and may keep a generic plan, instead of parsing and planning it on every use), or
 * undefined beyond MAX_NAMED distinct texts (those run unnamed, so a connection's statements stay bounded).
 */
function statementName(sql: string): string | undefined {
  const known = names.get(sql);
  if (known || names.size >= MAX_NAMED) return known;
  const name = `openbot_${createHash("sha256").update(sql).digest("hex").slice(0, 24)}`;
  names.set(sql, name);
  return name;
}

let renamed = 0;
/** After a stale plan: the text is prepared afresh under a new name on each connection as it next runs it. */
function renameStatement(sql: string): void {
  renamed += 1;
  const name = names.get(sql);
  if (name) names.set(sql, `${name.slice(0, 33)}_${renamed}`);
}

async function openPostgres(url: string): Promise<Db> {
  const pgModule = await import("pg");
  const Pool = pgModule.default?.Pool ?? (pgModule as unknown as { Pool: typeof import("pg").Pool }).Pool;
  const Client = pgModule.default?.Client ?? (pgModule as unknown as { Client: typeof import("pg").Client }).Client;
  const pool = new Pool({ connectionString: url, max: POOL_MAX });
  // An idle connection the server closes (a Postgres restart, an admin's terminate) is an `error` on the
  // pool; without a listener it would be an uncaught exception. The pool drops that client and opens a new
  // one on the next query.
  pool.on("error", (error: Error & { code?: string }) => logEvent("db_connection_lost", { code: error.code ?? null }));
  await pool.query("select 1");
  const poolState = () => ({
    open: pool.totalCount,
    idle: pool.idleCount,
    waiting: pool.waitingCount,
    max: POOL_MAX,
  });
  const listeners = new Map<string, Set<(payload: string) => void>>();
  let listener: import("pg").Client | null = null;
  let closed = false;
  let connecting: Promise<void> | null = null;
  // One connection LISTENs for the whole process; when it drops (a Postgres restart) it comes back and
  // listens to every channel again. Notifications sent while it was gone are lost: readers of live
  // events re-read the tables on reconnect (the rows are the truth, events only say where to look).
  const connectListener = (): Promise<void> => {
    connecting ??= (async () => {
      const client = new Client({ connectionString: url });
      client.on("error", (error: Error & { code?: string }) => {
        logEvent("db_listener_lost", { code: error.code ?? null });
        if (listener === client) listener = null;
        client.end().catch(() => undefined);
        if (!closed) setTimeout(() => void connectListener().catch(() => undefined), 500).unref();
      });
      client.on("notification", (n) => {
        for (const handler of listeners.get(n.channel) ?? []) handler(n.payload ?? "");
      });
      await client.connect();
      for (const channel of listeners.keys()) await client.query(`listen ${channel}`);
      listener = client;
    })().finally(() => {
      connecting = null;
    });
    return connecting;
  };
  const counts = newStats();
  const stats = () => ({ ...counts });
  const over =
    (client: Queryable, prepare = false): Db["query"] =>
    async <T>(sql: string, params: unknown[] = []) => {
      counts.statements += 1;
      counts.roundTrips += 1;
      // Not inside a transaction: a stale prepared statement's error would abort it, leaving no retry.
      const name = prepare && params.length > 0 ? statementName(sql) : undefined;
      if (!name) return (await client.query(sql, params)).rows as T[];
      try {
        return (await client.query({ name, text: sql, values: params })).rows as T[];
      } catch (error) {
        // Prepared on this connection before its tables changed shape (another instance migrated): once unnamed.
        if ((error as { code?: unknown }).code !== PLAN_CHANGED) throw error;
        renameStatement(sql);
        return (await client.query(sql, params)).rows as T[];
      }
    };
  return {
    kind: "postgres",
    query: over(pool, true),
    async transaction(fn) {
      const client = await pool.connect();
      // A connection the server ends while this transaction holds it (a restart, an admin's terminate)
      // between two statements is an `error` event on the client, which the pool listens to only while
      // the client is idle: without this listener it would be an uncaught exception. The next statement
      // then fails ("…not queryable": storage unavailable) and the pool drops the client on release.
      const lost = (error: Error & { code?: string }) => logEvent("db_connection_lost", { code: error.code ?? null });
      client.on("error", lost);
      counts.transactions += 1;
      counts.roundTrips += 2;
      try {
        await client.query("begin");
        const tx: Db = {
          kind: "postgres",
          query: over(client),
          transaction: () => {
            throw new Error("nested transactions are not supported");
          },
          listen: () => Promise.reject(new Error("listen inside a transaction is not supported")),
          notify: async (channel, payload) => {
            checkChannel(channel);
            await over(client)("select pg_notify($1, $2)", [channel, payload]);
          },
          close: async () => undefined,
          pool: poolState,
          stats,
        };
        const value = await fn(tx);
        await client.query("commit");
        return value;
      } catch (error) {
        await client.query("rollback").catch(() => undefined);
        throw error;
      } finally {
        client.off("error", lost);
        client.release();
      }
    },
    pool: poolState,
    stats,
    async listen(channel, handler) {
      if (!joinChannel(listeners, channel, handler)) return;
      if (!listener) await connectListener();
      await listener?.query(`listen ${channel}`);
    },
    async notify(channel, payload) {
      checkChannel(channel);
      await over(pool)("select pg_notify($1, $2)", [channel, payload]);
    },
    async close() {
      closed = true;
      await listener?.end().catch(() => undefined);
      await pool.end();
    },
  };
}

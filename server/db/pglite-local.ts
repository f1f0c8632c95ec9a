/**
 * PGlite in the thread that calls it: the engine the database thread (pglite-thread.ts) runs. One
 * connection, so a transaction owns it until it ends and every other statement waits behind it in order.
 * The main thread never loads this module: it talks to the thread through pglite-remote.ts.
 */
import "server-only";
import { mkdirSync, readFileSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import { preparedStatements } from "./pglite-prepared";
import { checkChannel } from "./pglite-protocol";

/** The engine's side of `Db` (no stats: the main thread counts what services ask). */
export interface LocalDb {
  query(sql: string, params?: unknown[]): Promise<unknown[]>;
  /** Runs `fn` in one transaction that owns the connection until it settles; a throw rolls it back. */
  transaction<T>(fn: (query: LocalDb["query"]) => Promise<T>): Promise<T>;
  listen(channel: string, handler: (payload: string) => void): Promise<void>;
  notify(channel: string, payload: string): Promise<void>;
  close(): Promise<void>;
}

/** A statement that reads or writes rows (not DDL, not a migration step led by a comment). */
const ROWS = /^\s*(select|with|insert|update|delete|values)\b/i;

/** How long PGlite may run queued statements before it lets the event loop take its messages. */
const YIELD_AFTER_MS = 5;

/**
 * `dataDir` null keeps the database in memory (tests); `template`, the path of a dump of a freshly made
 * database (`PGlite.dumpDataDir`), lets an in-memory one start from that instead of running initdb
 * (~1 s instead of ~4-6 s here; the test setup makes it once per machine).
 */
export async function openPgliteLocal(dataDir: string | null, template: string | null = null): Promise<LocalDb> {
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const pg = dataDir
    ? await PGlite.create(dataDir)
    : template
      ? await PGlite.create({ loadDataDir: new Blob([readFileSync(template)]) })
      : await PGlite.create();
  // A new 16 MB WAL segment is not zero-filled first (Postgres finds the end of its WAL by each record's
  // checksum and page address, not by zeros, which is why the setting exists). PGlite is one backend with
  // no checkpointer, so segments are made new until the first checkpoint at max_wal_size (1 GB), each
  // costing 16 MB of writes through its file-system layer: 12,000 inserts of 2.5 KB took 30-40 % less CPU
  // without the zero fill (measured in one process, interleaved).
  await pg.exec("set wal_init_zero = off");
  // Queued statements would run back to back in promise callbacks alone, never letting the event loop
  // take I/O (here: the main thread's messages, flushing replies) until the queue is empty: after
  // YIELD_AFTER_MS of continuous work the next statement waits one turn of the event loop (setImmediate).
  let chain: Promise<unknown> = Promise.resolve();
  let sliceStarted = performance.now();
  const turn = async () => {
    if (performance.now() - sliceStarted < YIELD_AFTER_MS) return;
    await new Promise((resolve) => setImmediate(resolve));
    sliceStarted = performance.now();
  };
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    const next = chain.then(turn, turn).then(fn);
    chain = next.catch(() => undefined);
    return next;
  };
  // A statement with parameters (every service statement) or one without that reads or writes rows (a
  // health check's `select 1`, the settings and vault reads of every run) runs as a named prepared
  // statement; any other (DDL, migrations: texts run once) as PGlite's own query.
  // NOTIFY payloads in prepared statements' replies (which PGlite's own listeners never see) go to the
  // handlers `listen` registered; those in replies PGlite reads itself reach them through `pg.listen`.
  const handlers = new Map<string, Set<(payload: string) => void>>();
  const prepared = preparedStatements(pg, (channel, payload) => {
    for (const handler of handlers.get(channel) ?? []) handler(payload);
  });
  const run = async (sql: string, params: unknown[] = []) =>
    params.length > 0 || ROWS.test(sql) ? prepared.run(sql, params) : (await pg.query(sql, params)).rows;
  return {
    query: (sql, params) => exclusive(() => run(sql, params)),
    transaction: (fn) => exclusive(() => pg.transaction((tx) => fn(async (s, p = []) => (await tx.query(s, p)).rows))),
    async listen(channel, handler) {
      checkChannel(channel);
      await exclusive(() => pg.listen(channel, handler));
      const known = handlers.get(channel);
      if (known) known.add(handler);
      else handlers.set(channel, new Set([handler]));
    },
    async notify(channel, payload) {
      checkChannel(channel);
      await exclusive(() => run("select pg_notify($1, $2)", [channel, payload]));
    },
    close: () => exclusive(() => pg.close()),
  };
}

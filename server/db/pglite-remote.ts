/**
 * `Db` over PGlite running in its own worker thread (pglite-thread.ts, bundled to
 * dist/worker/pglite-thread.mjs): the main thread keeps only this proxy, so PGlite's WebAssembly, protocol
 * code and file I/O no longer hold up HTTP, sandbox messages and the rest. Every request queued in one turn
 * of the microtask queue goes to the thread in one message. A transaction is a `begin`, its statements and
 * an `end` (commit or rollback); the thread keeps the connection for it until the end, as before. If the
 * thread dies, every waiting and later call fails with a storage error (SQLSTATE 08006), never a hang.
 */
import "server-only";
import { existsSync } from "node:fs";
import path from "node:path";
import { Worker } from "node:worker_threads";
import type { Db, DbStats } from "./client";
import {
  checkChannel,
  type DbReply,
  type DbRequest,
  type DbThreadData,
  fromWireError,
  joinChannel,
  postBatch,
  type WireError,
} from "./pglite-protocol";

/** Where the bundled thread lives; relative to the process's working directory (the repo root), like the sandbox worker. */
export const PGLITE_THREAD_PATH = path.join(/* turbopackIgnore: true */ process.cwd(), "dist/worker/pglite-thread.mjs");

/** Where a database's engine runs, as the engine thread itself reports it (tests, diagnostics). */
export interface PgliteThreadInfo {
  threadId: number;
  isMainThread: boolean;
  /** Ends the thread as a crash would (tests: a dead engine must fail calls, not hang them). */
  kill(): Promise<void>;
}

const threads = new WeakMap<Db, PgliteThreadInfo>();

/** The engine thread behind a PGlite `Db` opened by this module; undefined for any other `Db`. */
export const pgliteThreadOf = (db: Db): PgliteThreadInfo | undefined => threads.get(db);

type Pending = { resolve: (rows: unknown[]) => void; reject: (error: Error) => void };

/** A storage-unavailable error (class 08: `isStorageUnavailable` is true) saying why the thread is gone. */
const threadGone = (why: string): Error =>
  Object.assign(new Error(`The PGlite database thread is gone: ${why}`), { code: "08006" });

export async function openPgliteThread(
  dataDir: string | undefined,
  scriptPath: string = PGLITE_THREAD_PATH,
  template: string | undefined = undefined,
): Promise<Db> {
  if (!existsSync(scriptPath)) {
    throw new Error(
      `The PGlite database thread ${scriptPath} is missing: run \`node scripts/build-worker.mjs\` first.`,
    );
  }
  // Built apart by esbuild: the bundler must not try to follow this worker (it is not its module).
  const WorkerThread = Worker;
  const worker = new WorkerThread(/* turbopackIgnore: true */ scriptPath, {
    workerData: { dataDir: dataDir ?? null, template: dataDir ? null : (template ?? null) } satisfies DbThreadData,
  });
  worker.unref();
  const pending = new Map<number, Pending>();
  const listeners = new Map<string, Set<(payload: string) => void>>();
  let nextId = 1;
  let gone: Error | null = null;
  let closing = false;
  let referenced = false;
  // The thread keeps the process alive only while a call waits on it (listeners alone do not).
  const keepAlive = () => {
    const want = pending.size > 0;
    if (want === referenced) return;
    referenced = want;
    if (want) worker.ref();
    else worker.unref();
  };
  let outbox: DbRequest[] = [];
  const flush = () => {
    const batch = outbox;
    outbox = [];
    if (gone) return;
    // A parameter that cannot be structured-cloned fails that statement alone, as a bad parameter would
    // fail on the engine, and the rest are sent.
    const whole = postBatch(
      (messages: DbRequest[]) => worker.postMessage(messages),
      batch,
      (message, error) => {
        const waiter = pending.get(message.id);
        pending.delete(message.id);
        waiter?.reject(
          Object.assign(new Error(`A statement parameter cannot be sent to the database thread: ${String(error)}`), {
            code: "22023",
          }),
        );
      },
    );
    if (!whole) keepAlive();
  };
  const request = (message: DbRequest): Promise<unknown[]> => {
    if (gone) return Promise.reject(gone);
    return new Promise<unknown[]>((resolve, reject) => {
      pending.set(message.id, { resolve, reject });
      keepAlive();
      if (outbox.length === 0) queueMicrotask(flush);
      outbox.push(message);
    });
  };
  const fail = (error: Error) => {
    gone ??= error;
    for (const waiter of pending.values()) waiter.reject(gone);
    pending.clear();
    keepAlive();
  };
  let ready: (info: { threadId: number; isMainThread: boolean }) => void = () => undefined;
  let failedToStart: (error: Error) => void = () => undefined;
  const started = new Promise<{ threadId: number; isMainThread: boolean }>((resolve, reject) => {
    ready = resolve;
    failedToStart = reject;
  });
  const settle = (id: number, outcome: { rows: unknown[] } | { error: WireError }) => {
    const waiter = pending.get(id);
    if (!waiter) return;
    pending.delete(id);
    if ("rows" in outcome) waiter.resolve(outcome.rows);
    else waiter.reject(fromWireError(outcome.error));
  };
  worker.on("message", (batch: DbReply[]) => {
    for (const reply of batch) {
      if (reply.t === "ok") settle(reply.id, { rows: reply.rows });
      else if (reply.t === "error") settle(reply.id, { error: reply.error });
      else if (reply.t === "notification")
        for (const handler of listeners.get(reply.channel) ?? []) handler(reply.payload);
      else if (reply.t === "ready") ready(reply);
      else failedToStart(fromWireError(reply.error));
    }
    keepAlive();
  });
  const died = (why: string) => {
    const error = threadGone(why);
    failedToStart(error);
    fail(error);
  };
  worker.on("error", (error) => died(error.message));
  worker.on("messageerror", (error) => died(`a message could not be read: ${error.message}`));
  worker.on("exit", (code) => died(closing ? "the database was closed" : `it exited with code ${code}`));
  worker.ref();
  const info = await started
    .finally(() => worker.unref())
    .catch(async (error: unknown) => {
      await worker.terminate();
      throw error;
    });

  const counts: DbStats = { statements: 0, transactions: 0, roundTrips: 0 };
  const stats = () => ({ ...counts });
  const pool = () => ({ open: 1, idle: pending.size === 0 ? 1 : 0, waiting: Math.max(0, pending.size - 1), max: 1 });
  const query = async <T>(sql: string, params: unknown[] = [], tx?: number): Promise<T[]> => {
    counts.statements += 1;
    counts.roundTrips += 1;
    return (await request({ t: "query", id: nextId++, sql, params, tx })) as T[];
  };
  const db: Db = {
    kind: "pglite",
    query: (sql, params) => query(sql, params),
    async transaction(fn) {
      counts.transactions += 1;
      counts.roundTrips += 2;
      const tx = nextId++;
      await request({ t: "begin", id: tx });
      const inside: Db = {
        ...db,
        query: (sql, params) => query(sql, params, tx),
        transaction: () => {
          throw new Error("nested transactions are not supported");
        },
        listen: () => Promise.reject(new Error("listen inside a transaction is not supported")),
        notify: () => Promise.reject(new Error("notify inside a transaction is not supported")),
        close: async () => undefined,
      };
      const value = await fn(inside).catch(async (error: unknown) => {
        await request({ t: "end", id: nextId++, tx, commit: false }).catch(() => undefined);
        throw error;
      });
      await request({ t: "end", id: nextId++, tx, commit: true });
      return value;
    },
    async listen(channel, handler) {
      if (!joinChannel(listeners, channel, handler)) return;
      await request({ t: "listen", id: nextId++, channel }).catch((error: unknown) => {
        listeners.delete(channel);
        throw error;
      });
    },
    async notify(channel, payload) {
      checkChannel(channel);
      counts.statements += 1;
      counts.roundTrips += 1;
      await request({ t: "notify", id: nextId++, channel, payload });
    },
    async close() {
      if (gone) return;
      await request({ t: "close", id: nextId++ });
      closing = true;
      await worker.terminate();
    },
    pool,
    stats,
  };
  threads.set(db, {
    ...info,
    kill: async () => {
      await worker.terminate();
    },
  });
  return db;
}

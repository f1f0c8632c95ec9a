/**
 * The worker_threads entry that owns the PGlite database (bundled to dist/worker/pglite-thread.mjs by
 * scripts/build-worker.mjs): PGlite's WebAssembly, its protocol parsing and its file I/O run here, off the
 * main thread. Requests arrive in batches from pglite-remote.ts and run in arrival order on the one
 * connection; a transaction holds it from `begin` to `end`, taking its statements as they arrive.
 * Replies are batched too: sent at once when nothing else is queued or the main thread waits on a
 * transaction, otherwise gathered for at most FLUSH_AFTER_MS while the queue drains.
 */
import "server-only";
import { isMainThread, parentPort, threadId, workerData } from "node:worker_threads";
import { type LocalDb, openPgliteLocal } from "./pglite-local";
import { type DbReply, type DbRequest, type DbThreadData, postBatch, toWireError } from "./pglite-protocol";

/** How long a finished plain statement's reply may wait for others to share its message. */
const FLUSH_AFTER_MS = 1;

const port = parentPort;
if (!port) throw new Error("pglite-thread must run as a worker thread");

let outbox: DbReply[] = [];
let oldest = 0;
let flushQueued = false;
const flush = () => {
  flushQueued = false;
  if (outbox.length === 0) return;
  const batch = outbox;
  outbox = [];
  // A row that cannot be structured-cloned fails its own statement only.
  postBatch(
    (replies: DbReply[]) => port.postMessage(replies),
    batch,
    (reply, error) => {
      if ("id" in reply) port.postMessage([{ t: "error", id: reply.id, error: toWireError(error) }]);
    },
  );
};
/** Requests received and not yet answered (a transaction counts until its `end` is answered). */
let inflight = 0;
const send = (reply: DbReply, urgent = false) => {
  if (outbox.length === 0) oldest = performance.now();
  outbox.push(reply);
  if (urgent || inflight === 0 || performance.now() - oldest >= FLUSH_AFTER_MS) {
    if (!flushQueued) {
      flushQueued = true;
      queueMicrotask(flush);
    }
  } else if (!flushQueued) {
    flushQueued = true;
    setImmediate(flush);
  }
};
const answer = (id: number, promise: Promise<unknown[] | undefined>, urgent = false) => {
  inflight += 1;
  promise.then(
    (rows) => {
      inflight -= 1;
      send({ t: "ok", id, rows: rows ?? [] }, urgent);
    },
    (error: unknown) => {
      inflight -= 1;
      send({ t: "error", id, error: toWireError(error) }, urgent);
    },
  );
};

type TxMessage = Extract<DbRequest, { t: "query" } | { t: "end" }>;
/** Open transactions: messages that arrived for each, and the statement loop waiting for the next. */
const transactions = new Map<number, { queue: TxMessage[]; wake: (() => void) | null }>();
const ROLLBACK = Symbol("rollback");

function begin(db: LocalDb, id: number) {
  const inbox: { queue: TxMessage[]; wake: (() => void) | null } = { queue: [], wake: null };
  transactions.set(id, inbox);
  const next = async (): Promise<TxMessage> => {
    while (inbox.queue.length === 0) await new Promise<void>((resolve) => (inbox.wake = resolve));
    inbox.wake = null;
    return inbox.queue.shift() as TxMessage;
  };
  let endId: number | null = null;
  inflight += 1;
  db.transaction(async (query) => {
    send({ t: "ok", id, rows: [] }, true);
    for (;;) {
      const message = await next();
      if (message.t === "end") {
        endId = message.id;
        if (!message.commit) throw ROLLBACK;
        return;
      }
      try {
        send({ t: "ok", id: message.id, rows: await query(message.sql, message.params) }, true);
      } catch (error) {
        send({ t: "error", id: message.id, error: toWireError(error) }, true);
      }
    }
  }).then(
    () => {
      inflight -= 1;
      transactions.delete(id);
      if (endId !== null) send({ t: "ok", id: endId, rows: [] }, true);
    },
    (error: unknown) => {
      inflight -= 1;
      transactions.delete(id);
      // Before the statement loop started (BEGIN failed) the error answers `begin`; after, the `end`.
      const wire = { t: "error" as const, id: endId ?? id, error: toWireError(error) };
      send(error === ROLLBACK ? { t: "ok", id: endId ?? id, rows: [] } : wire, true);
    },
  );
}

function handle(db: LocalDb, request: DbRequest) {
  switch (request.t) {
    case "query": {
      if (request.tx === undefined) return answer(request.id, db.query(request.sql, request.params));
      return deliver(request.tx, request);
    }
    case "end":
      return deliver(request.tx, request);
    case "begin":
      return begin(db, request.id);
    case "listen":
      return answer(
        request.id,
        db
          .listen(request.channel, (payload) => send({ t: "notification", channel: request.channel, payload }, true))
          .then(() => undefined),
      );
    case "notify":
      return answer(
        request.id,
        db.notify(request.channel, request.payload).then(() => undefined),
      );
    case "close":
      return answer(
        request.id,
        db.close().then(() => undefined),
        true,
      );
  }
}

function deliver(tx: number, message: TxMessage) {
  const inbox = transactions.get(tx);
  if (!inbox) {
    send(
      { t: "error", id: message.id, error: { name: "Error", message: `no open transaction ${tx}`, fields: {} } },
      true,
    );
    return;
  }
  inbox.queue.push(message);
  inbox.wake?.();
}

const { dataDir, template } = workerData as DbThreadData;
openPgliteLocal(dataDir, template).then(
  (db) => {
    port.on("message", (batch: DbRequest[]) => {
      for (const request of batch) handle(db, request);
    });
    send({ t: "ready", threadId, isMainThread }, true);
  },
  (error: unknown) => send({ t: "failed", error: toWireError(error) }, true),
);

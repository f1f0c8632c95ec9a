/**
 * The instances on one database as one system: each instance holds a lease it renews (its heartbeat;
 * runs it hosts and jobs it took are its own while the lease holds), shared events travel between
 * instances through Postgres NOTIFY (small payloads: ids, the rows are read from the tables; a running
 * program's log lines in batches), and page presence is counted per instance so it ends with the lease.
 * PGlite (one process) takes the same path up to the wire: its database belongs to this process alone, so a
 * message is handed to the other clusters joined on the same database object (what its NOTIFY would reach)
 * instead of costing a statement on its one connection per change.
 */
import "server-only";
import type { Db } from "./db/client";
import type { EventBus, PlatformEvents, SharedEvent } from "./events";
import { logEvent, logFailure } from "./log";

/** An instance whose lease is older than this is gone: its runs are taken over, its jobs taken again. */
export const LEASE_MS = 10_000;
const HEARTBEAT_MS = 2_000;
const CHANNEL = "openbot_events";
/** NOTIFY payloads must stay below 8,000 bytes. */
const MAX_PAYLOAD = 7_500;
const MAX_LOG_TEXT = 2_000;
const LOG_BATCH_MS = 50;

/** PGlite: the receivers of the clusters joined on each database in this process (NOTIFY's reach there). */
const localReceivers = new WeakMap<Db, Set<(text: string) => void>>();
const publish = (db: Db, text: string): Promise<void> => {
  if (db.kind !== "pglite") return db.notify(CHANNEL, text);
  for (const receive of localReceivers.get(db) ?? []) receive(text);
  return Promise.resolve();
};

type Message =
  | { i: string; e: Exclude<SharedEvent, "run-log">; d: unknown }
  | { i: string; e: "run-log"; d: { runId: string; lines: PlatformEvents["run-log"][0]["line"][] } };

export interface Cluster {
  readonly instanceId: string;
  /**
   * A page of `chatId`, signed in as `userId`, is listening on this instance (a lease: it ends with this
   * instance's lease).
   */
  pageEntered(chatId: string, userId: string): Promise<void>;
  pageLeft(chatId: string, userId: string): Promise<void>;
  /** Whether a page of `chatId` signed in as `userId` listens on any live instance. */
  pagePresent(chatId: string, userId: string): Promise<boolean>;
  close(): Promise<void>;
}

export async function joinCluster(db: Db, events: EventBus, instanceId: string): Promise<Cluster> {
  const now = Date.now();
  await db.query("insert into instances (id, pid, started_at, lease_until) values ($1, $2, $3, $4)", [
    instanceId,
    process.pid,
    now,
    now + LEASE_MS,
  ]);
  let closed = false;
  const heartbeat = setInterval(() => {
    const at = Date.now();
    db.query(
      `insert into instances (id, pid, started_at, lease_until) values ($1, $2, $3, $4)
       on conflict (id) do update set lease_until = excluded.lease_until`,
      [instanceId, process.pid, at, at + LEASE_MS],
    )
      // Instances gone for an hour leave their rows (and page counts) behind: tidy them.
      .then(() => db.query("delete from instances where lease_until < $1", [at - 3_600_000]))
      .then(() =>
        db.query("delete from page_presence p where not exists (select 1 from instances i where i.id = p.instance_id)"),
      )
      .catch((error: unknown) => logFailure("heartbeat_failed", error));
  }, HEARTBEAT_MS);
  heartbeat.unref();

  // One send at a time, in order: Postgres delivers notifications in the order they were sent. A `run`
  // change equal to one still waiting to be sent is not queued again (a busy run emits one per call): the
  // waiting one goes out after this change is stored, and readers re-read the rows it points at.
  let sending: Promise<unknown> = Promise.resolve();
  const waitingRuns = new Set<string>();
  const send = (message: Message) => {
    const text = JSON.stringify(message);
    if (text.length > MAX_PAYLOAD) {
      logEvent("event_too_large", { event: message.e, bytes: text.length });
      return;
    }
    if (message.e === "run") {
      if (waitingRuns.has(text)) return;
      waitingRuns.add(text);
    }
    sending = sending
      .then(() => {
        waitingRuns.delete(text);
        return closed ? undefined : publish(db, text);
      })
      .catch((error: unknown) => logFailure("event_publish_failed", error, { event: message.e }));
  };
  const logBatches = new Map<string, PlatformEvents["run-log"][0]["line"][]>();
  let logTimer: ReturnType<typeof setTimeout> | null = null;
  const flushLogs = () => {
    logTimer = null;
    for (const [runId, lines] of logBatches) {
      let batch: typeof lines = [];
      let size = 200;
      for (const line of lines) {
        const cut = line.text.length > MAX_LOG_TEXT ? { ...line, text: `${line.text.slice(0, MAX_LOG_TEXT)}…` } : line;
        const bytes = JSON.stringify(cut).length + 1;
        if (size + bytes > MAX_PAYLOAD && batch.length) {
          send({ i: instanceId, e: "run-log", d: { runId, lines: batch } });
          batch = [];
          size = 200;
        }
        batch.push(cut);
        size += bytes;
      }
      if (batch.length) send({ i: instanceId, e: "run-log", d: { runId, lines: batch } });
    }
    logBatches.clear();
  };

  // PGlite with no other cluster joined on its database object (one instance, the usual case): nobody
  // would hear a message (this cluster drops its own), so none is made: a busy run emits a `run` change
  // per nested call, each a JSON text, three promises and a parse for nothing.
  const alone = () => db.kind === "pglite" && (localReceivers.get(db)?.size ?? 0) <= 1;
  events.attach((name, payload) => {
    if (alone()) return;
    if (name === "run-log") {
      const { runId, line } = payload as PlatformEvents["run-log"][0];
      const lines = logBatches.get(runId) ?? [];
      lines.push(line);
      logBatches.set(runId, lines);
      logTimer ??= setTimeout(flushLogs, LOG_BATCH_MS);
      return;
    }
    // Log lines go before the run change that follows them (a finished run after its last lines).
    if (logBatches.size) {
      if (logTimer) clearTimeout(logTimer);
      flushLogs();
    }
    send({ i: instanceId, e: name as Exclude<SharedEvent, "run-log">, d: payload });
  });

  const receive = (text: string) => {
    let message: Message;
    try {
      message = JSON.parse(text) as Message;
    } catch {
      return;
    }
    if (message.i === instanceId || closed) return;
    if (message.e === "run-log") {
      for (const line of message.d.lines) events.deliver("run-log", { runId: message.d.runId, line });
    } else events.deliver(message.e, message.d as never);
  };
  if (db.kind === "pglite") {
    const receivers = localReceivers.get(db) ?? new Set();
    receivers.add(receive);
    localReceivers.set(db, receivers);
  } else await db.listen(CHANNEL, receive);

  return {
    instanceId,
    async pageEntered(chatId, userId) {
      await db.query(
        `insert into page_presence (chat_id, instance_id, user_id, pages) values ($1, $2, $3, 1)
         on conflict (chat_id, instance_id, user_id) do update set pages = page_presence.pages + 1`,
        [chatId, instanceId, userId],
      );
    },
    async pageLeft(chatId, userId) {
      const where = "chat_id = $1 and instance_id = $2 and user_id = $3";
      await db.query(`update page_presence set pages = pages - 1 where ${where}`, [chatId, instanceId, userId]);
      await db.query(`delete from page_presence where ${where} and pages <= 0`, [chatId, instanceId, userId]);
    },
    async pagePresent(chatId, userId) {
      const rows = await db.query(
        `select 1 from page_presence p join instances i on i.id = p.instance_id
         where p.chat_id = $1 and p.user_id = $3 and p.pages > 0 and i.lease_until > $2 limit 1`,
        [chatId, Date.now(), userId],
      );
      return rows.length > 0;
    },
    async close() {
      if (logTimer) clearTimeout(logTimer);
      flushLogs();
      clearInterval(heartbeat);
      events.attach(null);
      await sending;
      closed = true;
      localReceivers.get(db)?.delete(receive);
      // Leaving on purpose: the lease ends now, so another instance takes this one's runs at once.
      await db.query("delete from page_presence where instance_id = $1", [instanceId]).catch(() => undefined);
      await db.query("update instances set lease_until = 0 where id = $1", [instanceId]).catch(() => undefined);
    },
  };
}

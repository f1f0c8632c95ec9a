/**
 * The messages between the main thread's PGlite client (pglite-remote.ts) and the thread that owns the
 * database (pglite-thread.ts). Each side posts arrays (every request or reply queued in one turn goes in
 * one message). Errors cross as plain data with their SQLSTATE `code` and Postgres fields, never as class
 * instances. Imports nothing Node-specific.
 */
import "server-only";

/** What the main thread asks. `tx` names the transaction a statement belongs to (its `begin` id). */
export type DbRequest =
  | { t: "query"; id: number; sql: string; params: unknown[]; tx?: number }
  | { t: "begin"; id: number }
  | { t: "end"; id: number; tx: number; commit: boolean }
  | { t: "listen"; id: number; channel: string }
  | { t: "notify"; id: number; channel: string; payload: string }
  | { t: "close"; id: number };

/** An error as data: the message plus every plain field PGlite's DatabaseError carries (code, detail, …). */
export interface WireError {
  name: string;
  message: string;
  fields: Record<string, string | number | boolean>;
}

/** What the thread answers: one reply per request, NOTIFY payloads, and once its start (or its failure). */
export type DbReply =
  | { t: "ok"; id: number; rows: unknown[] }
  | { t: "error"; id: number; error: WireError }
  | { t: "notification"; channel: string; payload: string }
  | { t: "ready"; threadId: number; isMainThread: boolean }
  | { t: "failed"; error: WireError };

/** What the thread is started with (an object: Turbopack drops a primitive `workerData`). */
export interface DbThreadData {
  dataDir: string | null;
  /** For an in-memory database: a dump of a freshly made one (PGlite's dumpDataDir) to start from. */
  template: string | null;
}

export function toWireError(error: unknown): WireError {
  if (typeof error !== "object" || error === null) return { name: "Error", message: String(error), fields: {} };
  const fields: WireError["fields"] = {};
  for (const [key, value] of Object.entries(error)) {
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") fields[key] = value;
  }
  const { name, message } = error as { name?: unknown; message?: unknown };
  return {
    name: typeof name === "string" ? name : "Error",
    message: typeof message === "string" ? message : String(error),
    fields,
  };
}

/** An `Error` with the wire error's message, name and fields (`code`, `detail`, `constraint`, …) as own properties. */
export function fromWireError(wire: WireError): Error {
  const error = new Error(wire.message);
  Object.assign(error, wire.fields);
  error.name = wire.name;
  return error;
}

const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

/** Channel names go into `listen <name>` unquoted: a lowercase identifier only. */
export const checkChannel = (channel: string) => {
  if (!CHANNEL.test(channel)) throw new Error(`Bad channel name: ${channel}`);
};

/** "cached plan must not change result type": a prepared statement's tables changed shape (a migration). */
export const PLAN_CHANGED = "0A000";

/**
 * Adds `handler` to `channel`'s handlers (checking the name); true when it is the channel's first, so the
 * caller subscribes the connection to it.
 */
export function joinChannel(
  listeners: Map<string, Set<(payload: string) => void>>,
  channel: string,
  handler: (payload: string) => void,
): boolean {
  checkChannel(channel);
  const known = listeners.get(channel);
  if (known) {
    known.add(handler);
    return false;
  }
  listeners.set(channel, new Set([handler]));
  return true;
}

/**
 * Posts a batch of messages as one; if it cannot be structured-cloned (a function, a class with methods
 * among the values), posts them one by one so only the message that cannot be sent fails, through
 * `unsendable`. True when the batch went whole.
 */
export function postBatch<T>(
  post: (batch: T[]) => void,
  batch: T[],
  unsendable: (message: T, error: unknown) => void,
): boolean {
  try {
    post(batch);
    return true;
  } catch {
    for (const message of batch) {
      try {
        post([message]);
      } catch (error) {
        unsendable(message, error);
      }
    }
    return false;
  }
}

/**
 * Group commit: statements of one kind that callers issue while an earlier one of that kind is still on
 * its way (or within one turn of the event loop) go to the database as ONE multi-row statement, each
 * caller getting its own row back. PGlite pays a fixed cost per statement (parse, plan, the call into its
 * WebAssembly) that dwarfs the cost of a row, and Postgres a round trip, so under load N calls cost one
 * statement instead of N.
 *
 * Each caller still waits for its own row: nothing it writes is reported done before the statement that
 * holds it has returned. A statement that fails is sent again member by member, so one bad row fails
 * only its own caller. Members with the same `key` never share a statement (a later one goes in the
 * next), and statements of one kind go one at a time in the order their members arrived.
 *
 * Reads batch the same way (`readByKey`, `sharedRead`): the built-in Apps' reads of one kind issued together
 * (a `Promise.all` in a program, or several runs at once) are one statement, each caller getting exactly
 * the rows its own statement would have returned, in the same order.
 */
import "server-only";
import { type Db, isStorageUnavailable } from "./client";

export interface BatchKind<In, Out> {
  /** For errors and tests. */
  readonly name: string;
  /**
   * ONE statement for every member, in order; returns one result per member in the same order. It must
   * be all-or-nothing (a single statement is), since a failure is retried member by member.
   */
  run(db: Db, members: readonly In[]): Promise<Out[]>;
  /** Members with equal keys are never in one statement (e.g. two writes of the same row). */
  key?(member: In): string;
  /** Most members in one statement (default 256). */
  readonly max?: number;
  /** A member's size in its statement (e.g. its sealed values' length); a statement holds at most MAX_BYTES of them, and always one. */
  size?(member: In): number;
}

interface Waiting<In, Out> {
  member: In;
  resolve(value: Out): void;
  reject(error: unknown): void;
}

interface Lane<In, Out> {
  queue: Waiting<In, Out>[];
  busy: boolean;
  scheduled: boolean;
}

const DEFAULT_MAX = 256;
/** Sizes (see BatchKind.size) one statement may carry: big arguments or results go in smaller statements. */
const MAX_BYTES = 1024 * 1024;

/** What every lane of one database has sent (tests and bench:load). */
export interface BatchStats {
  /** Statements sent for batches (retries of single members included). */
  statements: number;
  /** Members written through them. */
  members: number;
  /** Batches that failed and were retried member by member. */
  retried: number;
}

const lanes = new WeakMap<Db, Map<BatchKind<never, unknown>, Lane<unknown, unknown>>>();
const counts = new WeakMap<Db, BatchStats>();

export function batchStats(db: Db): BatchStats {
  return { ...(counts.get(db) ?? { statements: 0, members: 0, retried: 0 }) };
}

/** Writes `member` with the other members of `kind` pending on `db`; resolves with its own result. */
export function batched<In, Out>(db: Db, kind: BatchKind<In, Out>, member: In): Promise<Out> {
  let byKind = lanes.get(db);
  if (!byKind) {
    byKind = new Map();
    lanes.set(db, byKind);
  }
  let lane = byKind.get(kind as BatchKind<never, unknown>) as Lane<In, Out> | undefined;
  if (!lane) {
    lane = { queue: [], busy: false, scheduled: false };
    byKind.set(kind as BatchKind<never, unknown>, lane as Lane<unknown, unknown>);
  }
  const open = lane;
  return new Promise<Out>((resolve, reject) => {
    open.queue.push({ member, resolve, reject });
    if (!open.busy && !open.scheduled) {
      // Nothing on its way: gather what else arrives in this turn of the event loop, then send.
      open.scheduled = true;
      setImmediate(() => {
        open.scheduled = false;
        void drain(db, kind, open);
      });
    }
  });
}

async function drain<In, Out>(db: Db, kind: BatchKind<In, Out>, lane: Lane<In, Out>): Promise<void> {
  if (lane.busy) return;
  lane.busy = true;
  try {
    while (lane.queue.length > 0) await sendOne(db, kind, take(kind, lane));
  } finally {
    lane.busy = false;
  }
}

/** The next statement's members: in arrival order, up to `max` and MAX_BYTES, no two with the same key. */
function take<In, Out>(kind: BatchKind<In, Out>, lane: Lane<In, Out>): Waiting<In, Out>[] {
  const max = kind.max ?? DEFAULT_MAX;
  const keys = new Set<string>();
  const taken: Waiting<In, Out>[] = [];
  const left: Waiting<In, Out>[] = [];
  let bytes = 0;
  let full = false;
  for (const w of lane.queue) {
    const key = kind.key?.(w.member);
    const size = kind.size?.(w.member) ?? 0;
    if (taken.length > 0 && (taken.length >= max || bytes + size > MAX_BYTES)) full = true;
    // Once full, the rest waits in order; a later member of a key already taken or waiting stays behind it.
    const behind = full || (key !== undefined && keys.has(key));
    if (key !== undefined) keys.add(key);
    if (behind) {
      left.push(w);
      continue;
    }
    bytes += size;
    taken.push(w);
  }
  lane.queue = left;
  return taken;
}

async function sendOne<In, Out>(db: Db, kind: BatchKind<In, Out>, members: Waiting<In, Out>[]): Promise<void> {
  const stats = counts.get(db) ?? { statements: 0, members: 0, retried: 0 };
  counts.set(db, stats);
  stats.statements += 1;
  stats.members += members.length;
  try {
    const results = await run(db, kind, members);
    for (const [i, w] of members.entries()) w.resolve(results[i] as Out);
    return;
  } catch (error) {
    // The database is gone (a restart, a lost connection): each member alone would only fail again.
    if (members.length === 1 || isStorageUnavailable(error)) {
      for (const w of members) w.reject(error);
      return;
    }
  }
  // One bad member must not fail the others: each is sent alone, in order, and gets its own answer.
  stats.retried += 1;
  for (const w of members) {
    stats.statements += 1;
    try {
      const [result] = await run(db, kind, [w]);
      w.resolve(result as Out);
    } catch (error) {
      w.reject(error);
    }
  }
}

async function run<In, Out>(db: Db, kind: BatchKind<In, Out>, members: Waiting<In, Out>[]): Promise<Out[]> {
  const results = await kind.run(
    db,
    members.map((w) => w.member),
  );
  if (results.length !== members.length)
    throw new Error(`${kind.name}: ${results.length} results for ${members.length} members`);
  return results;
}

/**
 * A read kind whose members are keys: ONE statement `sql` with `$1` the distinct keys (a `text[]`, e.g.
 * `where day = any($1::text[])`), each member getting the rows whose `keyOf` is its key, in the order the
 * statement returned them: what a lone `where day = $1` with the same `order by` gives. Members of one key
 * share the rows (they must not change them).
 */
export function readByKey<Row>(name: string, sql: string, keyOf: (row: Row) => string): BatchKind<string, Row[]> {
  return {
    name,
    async run(db, keys) {
      const byKey = new Map<string, Row[]>(keys.map((k) => [k, []]));
      for (const row of await db.query<Row>(sql, [[...byKey.keys()]])) byKey.get(keyOf(row))?.push(row);
      return keys.map((k) => byKey.get(k) ?? []);
    },
  };
}

/** A read without parameters: members issued together share ONE statement's rows (they must not change them). */
export function sharedRead<Row>(name: string, sql: string): BatchKind<null, Row[]> {
  return {
    name,
    async run(db, members) {
      const rows = await db.query<Row>(sql);
      return members.map(() => rows);
    },
  };
}

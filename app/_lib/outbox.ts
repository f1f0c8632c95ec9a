"use client";
/**
 * The page's outbox in IndexedDB (Dexie): the end of a run the worker reported is kept here until the
 * server acknowledges it, so a reload or a dropped connection loses nothing. Re-sending is idempotent:
 * the server ignores the end of an attempt it already stored.
 */
import type { TRPCClient } from "@trpc/client";
import { TRPCClientError } from "@trpc/client";
import Dexie, { type EntityTable } from "dexie";
import type { RunOutcome } from "@/contracts/engine";
import type { AppRouter } from "@/server/api/root";

interface PendingFinish {
  key: string;
  runId: string;
  attempt: number;
  outcome: RunOutcome;
  createdAt: number;
}

class OutboxDb extends Dexie {
  finishes!: EntityTable<PendingFinish, "key">;
  constructor() {
    super("openbot-outbox");
    this.version(1).stores({ finishes: "key, createdAt" });
  }
}

let db: OutboxDb | undefined;
const outbox = () => (db ??= new OutboxDb());

/** Errors after which re-sending cannot help (the run or attempt is gone): the entry is dropped. */
function isFinal(error: unknown): boolean {
  return (
    error instanceof TRPCClientError &&
    ["NOT_FOUND", "CONFLICT", "BAD_REQUEST", "FORBIDDEN"].includes(error.data?.code as string)
  );
}

export async function sendFinish(client: TRPCClient<AppRouter>, runId: string, attempt: number, outcome: RunOutcome) {
  const key = `${runId}:${attempt}`;
  await outbox().finishes.put({ key, runId, attempt, outcome, createdAt: Date.now() });
  try {
    const record = await client.codeRuns.finish.mutate({ runId, attempt, outcome });
    await outbox().finishes.delete(key);
    return record;
  } catch (error) {
    if (isFinal(error)) await outbox().finishes.delete(key);
    throw error;
  }
}

/** Re-sends what the server has not acknowledged; returns how many were delivered. */
export async function flushOutbox(client: TRPCClient<AppRouter>): Promise<number> {
  let delivered = 0;
  for (const item of await outbox().finishes.orderBy("createdAt").toArray()) {
    try {
      await client.codeRuns.finish.mutate({ runId: item.runId, attempt: item.attempt, outcome: item.outcome });
      await outbox().finishes.delete(item.key);
      delivered++;
    } catch (error) {
      if (isFinal(error)) await outbox().finishes.delete(item.key);
    }
  }
  return delivered;
}

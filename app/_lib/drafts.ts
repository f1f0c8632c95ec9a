"use client";
/**
 * The composer's unsaved program for each chat (its code, reason and language) in IndexedDB (Dexie), so a
 * reload or a closed tab loses nothing of what a person was writing. Signing out clears them, so the next
 * person at the same browser does not find them. A draft that is just the starting example is not kept.
 */
import Dexie, { type EntityTable } from "dexie";

export interface Draft {
  chatId: string;
  code: string;
  reason: string;
  language: "javascript" | "typescript";
  updatedAt: number;
}

class DraftsDb extends Dexie {
  drafts!: EntityTable<Draft, "chatId">;
  constructor() {
    super("openbot-drafts");
    this.version(1).stores({ drafts: "chatId, updatedAt" });
  }
}

let db: DraftsDb | undefined;
const drafts = () => (db ??= new DraftsDb());

/** How long the composer waits for IndexedDB (held up, e.g., by another tab's upgrade) before it starts fresh. */
const LOAD_LIMIT_MS = 3000;

/**
 * The chat's draft, or undefined (none, IndexedDB is not available, or it did not answer within
 * LOAD_LIMIT_MS: the composer starts fresh rather than stay locked).
 */
export async function loadDraft(chatId: string): Promise<Draft | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), LOAD_LIMIT_MS);
  });
  try {
    return await Promise.race([drafts().drafts.get(chatId), late]);
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

/** Keeps the chat's draft; `empty` (the starting example, no reason) removes it instead. */
export function saveDraft(draft: Omit<Draft, "updatedAt">, empty: boolean): void {
  const table = drafts().drafts;
  const write: Promise<unknown> = empty ? table.delete(draft.chatId) : table.put({ ...draft, updatedAt: Date.now() });
  write.catch(() => undefined);
}

export async function clearDrafts(): Promise<void> {
  try {
    await drafts().drafts.clear();
  } catch {
    // Nothing kept, or no IndexedDB.
  }
}

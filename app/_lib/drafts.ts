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

/** The chat's draft, or undefined (none, or IndexedDB is not available: the composer starts fresh). */
export async function loadDraft(chatId: string): Promise<Draft | undefined> {
  try {
    return await drafts().drafts.get(chatId);
  } catch {
    return undefined;
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

/**
 * The built-in Notes app: an MCP server over the `notes` table (list and read are read-only; the reads of
 * one kind issued together, by any connection, are one statement: db/batch.ts).
 */
import "server-only";
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { batched, readByKey, sharedRead } from "../../db/batch";
import type { Db } from "../../db/client";
import { READ_ONLY, structured, toolError } from "./result";

const listNotes = sharedRead<{ id: string; title: string }>(
  "list-notes",
  "select id, title from notes order by updated_at desc, id",
);
const readNotes = readByKey<{ id: string; title: string; body: string }>(
  "read-note",
  "select id, title, body from notes where id = any($1::text[])",
  (row) => row.id,
);

export function createNotesServer(db: Db): McpServer {
  const server = new McpServer({ name: "openbot-notes", version: "1.0.0" });
  server.registerTool(
    "list-notes",
    {
      title: "List notes",
      description: "Lists all notes (id and title), newest first.",
      inputSchema: {},
      outputSchema: { notes: z.array(z.object({ id: z.string(), title: z.string() })) },
      annotations: READ_ONLY,
    },
    async () => {
      const rows = await batched(db, listNotes, null);
      return structured({ notes: rows.map((r) => ({ id: r.id, title: r.title })) });
    },
  );
  server.registerTool(
    "read-note",
    {
      title: "Read note",
      description: "Reads one note with its body.",
      inputSchema: { id: z.string().min(1).describe("The note's id, from list-notes") },
      outputSchema: { id: z.string(), title: z.string(), body: z.string() },
      annotations: READ_ONLY,
    },
    async ({ id }) => {
      const row = (await batched(db, readNotes, id))[0];
      if (!row) return toolError("No note has this id.");
      return structured({ id: row.id, title: row.title, body: row.body });
    },
  );
  server.registerTool(
    "write-note",
    {
      title: "Write note",
      description: "Creates a new note and returns its id.",
      inputSchema: { title: z.string().min(1).max(200), body: z.string().max(100000) },
      outputSchema: { id: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async ({ title, body }) => {
      const id = `note_${randomUUID()}`;
      const now = Date.now();
      await db.query("insert into notes (id, title, body, created_at, updated_at) values ($1, $2, $3, $4, $4)", [
        id,
        title,
        body,
        now,
      ]);
      return structured({ id });
    },
  );
  return server;
}

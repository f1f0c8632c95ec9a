/**
 * The built-in Email app: an MCP server whose "sent" mail goes to the `emails` table, the outbox the UI
 * shows; nothing leaves the machine. `list-sent` is read-only (the reads issued together, by any
 * connection, are one statement: db/batch.ts).
 */
import "server-only";
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { batched, sharedRead } from "../../db/batch";
import type { Db } from "../../db/client";
import { READ_ONLY, structured } from "./result";

interface SentRow {
  id: string;
  to_address: string;
  subject: string;
  body: string;
  sent_at: string | number;
}

const listSent = sharedRead<SentRow>(
  "list-sent",
  "select id, to_address, subject, body, sent_at from emails order by sent_at desc, id",
);

export function createEmailServer(db: Db): McpServer {
  const server = new McpServer({ name: "openbot-email", version: "1.0.0" });
  server.registerTool(
    "send-email",
    {
      title: "Send email",
      description: "Sends an email (to the outbox) and returns its id.",
      inputSchema: {
        to: z.email().max(320).describe("Recipient address"),
        subject: z.string().max(500),
        body: z.string().max(100000),
      },
      outputSchema: { id: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async ({ to, subject, body }) => {
      const id = `mail_${randomUUID()}`;
      await db.query("insert into emails (id, to_address, subject, body, sent_at) values ($1, $2, $3, $4, $5)", [
        id,
        to,
        subject,
        body,
        Date.now(),
      ]);
      return structured({ id });
    },
  );
  server.registerTool(
    "list-sent",
    {
      title: "List sent email",
      description: "Lists the sent emails, newest first.",
      inputSchema: {},
      outputSchema: {
        emails: z.array(
          z.object({
            id: z.string(),
            to: z.string(),
            subject: z.string(),
            body: z.string(),
            sentAt: z.string().describe("ISO 8601"),
          }),
        ),
      },
      annotations: READ_ONLY,
    },
    async () => {
      const rows = await batched(db, listSent, null);
      return structured({
        emails: rows.map((r) => ({
          id: r.id,
          to: r.to_address,
          subject: r.subject,
          body: r.body,
          sentAt: new Date(Number(r.sent_at)).toISOString(),
        })),
      });
    },
  );
  return server;
}

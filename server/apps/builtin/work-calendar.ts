/**
 * The built-in Work calendar app: an MCP server over the `calendar_events` table. `list-events` reads one
 * day (read-only; the reads issued together, by any connection, are one statement: db/batch.ts),
 * `create-event` adds an event; the event's day is the date part of its start.
 */
import "server-only";
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { batched, readByKey } from "../../db/batch";
import type { Db } from "../../db/client";
import { READ_ONLY, structured, toolError } from "./result";

const eventShape = {
  id: z.string(),
  title: z.string(),
  start: z.string().describe("Start time, ISO 8601"),
  end: z.string().describe("End time, ISO 8601"),
  attendees: z.number().int().describe("Number of people invited"),
};

interface EventRow {
  day: string;
  id: string;
  title: string;
  start_at: string;
  end_at: string;
  attendees: number;
}

/** One day's events, in start order, for each day asked for together. */
const listDays = readByKey<EventRow>(
  "list-events",
  "select day, id, title, start_at, end_at, attendees from calendar_events where day = any($1::text[]) order by start_at, id",
  (row) => row.day,
);

export function createWorkCalendarServer(db: Db): McpServer {
  const server = new McpServer({ name: "openbot-work-calendar", version: "1.0.0" });
  server.registerTool(
    "list-events",
    {
      title: "List events",
      description: "Lists the calendar events of one day, ordered by start time.",
      inputSchema: {
        day: z
          .string()
          .regex(/^\d{4}-\d{2}-\d{2}$/)
          .describe("The day, as YYYY-MM-DD"),
      },
      outputSchema: { events: z.array(z.object(eventShape)) },
      annotations: READ_ONLY,
    },
    async ({ day }) => {
      const rows = await batched(db, listDays, day);
      return structured({
        events: rows.map((r) => ({
          id: r.id,
          title: r.title,
          start: r.start_at,
          end: r.end_at,
          attendees: Number(r.attendees),
        })),
      });
    },
  );
  server.registerTool(
    "create-event",
    {
      title: "Create event",
      description: "Adds an event to the calendar and returns its id.",
      inputSchema: {
        title: z.string().min(1).max(200),
        start: z.iso.datetime({ offset: true }).describe("Start time, ISO 8601 (e.g. 2026-10-23T09:00:00Z)"),
        end: z.iso.datetime({ offset: true }).describe("End time, ISO 8601, after the start"),
        attendees: z.number().int().min(0).max(100000).describe("Number of people invited"),
      },
      outputSchema: { id: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async ({ title, start, end, attendees }) => {
      if (Date.parse(end) <= Date.parse(start)) return toolError("The end must be after the start.");
      const id = `evt_${randomUUID()}`;
      await db.query(
        "insert into calendar_events (id, day, title, start_at, end_at, attendees) values ($1, $2, $3, $4, $5, $6)",
        [id, start.slice(0, 10), title, start, end, attendees],
      );
      return structured({ id });
    },
  );
  return server;
}

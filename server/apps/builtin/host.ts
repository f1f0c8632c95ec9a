/**
 * Runs the built-in apps inside this process (PGlite can be opened by one process only, so a child process
 * could not reach their data). Each connection gets its own McpServer over an in-process link
 * (server/apps/in-process.ts): no loopback socket, so a busy event loop cannot make a connect time out.
 */
import "server-only";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Db } from "../../db/client";
import { linkedPair } from "../in-process";
import { createEmailServer } from "./email";
import { createNotesServer } from "./notes";
import { createWorkCalendarServer } from "./work-calendar";

export const BUILTIN_APPS = ["work-calendar", "notes", "email"] as const;
export type BuiltinApp = (typeof BUILTIN_APPS)[number];

const FACTORIES: Record<BuiltinApp, (db: Db) => McpServer> = {
  "work-calendar": createWorkCalendarServer,
  notes: createNotesServer,
  email: createEmailServer,
};

export interface BuiltinHost {
  /** A client transport linked to a fresh McpServer of `app` in this process (started when the client starts). */
  connect(app: BuiltinApp): Transport;
  close(): Promise<void>;
}

export async function startBuiltinHost(db: Db): Promise<BuiltinHost> {
  const open = new Set<McpServer>();
  return {
    connect(app) {
      const { client, server } = linkedPair();
      const mcp = FACTORIES[app](db);
      open.add(mcp);
      const startClient = client.start.bind(client);
      client.start = async () => {
        await mcp.connect(server);
        await startClient();
      };
      const onClose = () => open.delete(mcp);
      server.onclose = onClose;
      return client;
    },
    close: async () => {
      await Promise.allSettled([...open].map((mcp) => mcp.close()));
      open.clear();
    },
  };
}

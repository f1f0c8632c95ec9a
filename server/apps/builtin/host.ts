/**
 * Serves the built-in apps over MCP Streamable HTTP on a loopback port inside this process (PGlite can be
 * opened by one process only, so a child process could not reach their data). Stateless: every request
 * gets a fresh McpServer and transport. A random bearer token, known only to this process, keeps other
 * local programs out.
 */
import "server-only";
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Db } from "../../db/client";
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
  /** The app's MCP endpoint, e.g. http://127.0.0.1:41234/mcp/work-calendar. */
  url(app: BuiltinApp): URL;
  /** Headers a client must send (the bearer token). */
  headers: Record<string, string>;
  close(): Promise<void>;
}

export async function startBuiltinHost(db: Db): Promise<BuiltinHost> {
  const token = randomBytes(24).toString("base64url");
  const expected = Buffer.from(`Bearer ${token}`);
  const server: Server = createServer((req, res) => {
    const given = Buffer.from(req.headers.authorization ?? "");
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      return void deny(res, 401, "unauthorized");
    const app = appOf(req);
    if (!app) return void deny(res, 404, "not found");
    // Stateless: no standalone notification stream (GET) and no sessions to end (DELETE).
    if (req.method !== "POST") {
      res.setHeader("Allow", "POST");
      return void deny(res, 405, "method not allowed");
    }
    void serve(FACTORIES[app](db), req, res);
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: (app) => new URL(`http://127.0.0.1:${port}/mcp/${app}`),
    headers: { Authorization: `Bearer ${token}` },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function appOf(req: IncomingMessage): BuiltinApp | undefined {
  const match = /^\/mcp\/([a-z-]+)(?:\?.*)?$/.exec(req.url ?? "");
  const name = match?.[1];
  return (BUILTIN_APPS as readonly string[]).includes(name ?? "") ? (name as BuiltinApp) : undefined;
}

async function serve(mcp: McpServer, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => {
    void transport.close();
    void mcp.close();
  });
  try {
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  } catch {
    if (!res.headersSent) deny(res, 500, "internal error");
    else res.end();
  }
}

function deny(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

/**
 * A connection's transport is sealed at rest (migration 0028): header and environment values, an OAuth
 * client secret, a key in the URL never sit in the database as text, yet the App still gets them; rows
 * from before are sealed when the server starts, and still work.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appRouter } from "@/server/api/root";
import { createContextInner } from "@/server/api/trpc";
import { bootPlatform } from "@/server/boot";
import { readEnv } from "@/server/env";
import type { Platform } from "@/server/platform";
import { principalFromToken } from "@/server/services/auth";
import { ADMIN_TOKEN } from "../helpers/platform";

const HEADER_SECRET = "Bearer hdr-s3cret-7f4e9a";
const ENV_SECRET = "env-s3cret-2b8c1d";
const QUERY_SECRET = "qry-s3cret-5a6b7c";

let server: Server;
let url = "";
const seen: IncomingHttpHeaders[] = [];
let dataDir = "";

beforeAll(async () => {
  // Not an MCP server: it only records what reached it (the connection then fails, which is fine here).
  server = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  dataDir = mkdtempSync(path.join(tmpdir(), "openbot-sealed-"));
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(dataDir, { recursive: true, force: true });
});

async function boot(): Promise<Platform> {
  const env = readEnv({ OPENBOT_DATA_DIR: dataDir, OPENBOT_ADMIN_TOKEN: ADMIN_TOKEN });
  return bootPlatform({ env, inMemoryDb: false });
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  if (!check()) throw new Error(`timed out waiting for ${what}`);
}

const headerArrived = () => seen.some((h) => h.authorization === HEADER_SECRET);

describe("sealed connection transports", () => {
  it("keeps header, environment and URL secrets out of the database's text, and the App still gets them", async () => {
    const platform = await boot();
    try {
      const admin = (await principalFromToken(platform.db, ADMIN_TOKEN))!;
      const caller = appRouter.createCaller(createContextInner(platform, admin));
      await caller.connections.create({
        name: "Sealed http",
        transport: { type: "http", url: `${url}?key=${QUERY_SECRET}`, headers: { Authorization: HEADER_SECRET } },
      });
      await until(headerArrived, "the header at the App");
      const out = path.join(dataDir, "env-out.txt");
      await caller.connections.create({
        name: "Sealed stdio",
        transport: {
          type: "stdio",
          command: process.execPath,
          args: ["-e", "require('fs').writeFileSync(process.env.OUT_FILE, process.env.SECRET_VALUE)"],
          env: { SECRET_VALUE: ENV_SECRET, OUT_FILE: out },
        },
      });
      await until(() => existsSync(out) && readFileSync(out, "utf8") === ENV_SECRET, "the environment at the App");

      const rows = await platform.db.query<{ name: string; transport: string; transport_enc: string | null }>(
        "select name, transport, transport_enc from connections where builtin is null order by name",
      );
      expect(rows.map((r) => [r.name, r.transport])).toEqual([
        ["Sealed http", '{"type":"http"}'],
        ["Sealed stdio", '{"type":"stdio"}'],
      ]);
      for (const row of rows) expect(row.transport_enc).toMatch(/^enc1:/);
      const dump = JSON.stringify(await platform.db.query("select * from connections"));
      for (const secret of [HEADER_SECRET, ENV_SECRET, QUERY_SECRET]) expect(dump).not.toContain(secret);
      // Admins still see what is configured, values hidden as before.
      const listed = (await caller.connections.list()).find((c) => c.name === "Sealed http");
      expect(listed?.transport).toMatchObject({ type: "http", headers: { Authorization: "••••" } });
    } finally {
      await platform.close();
    }
  }, 30_000);

  it("seals a row written before, when the server starts, and the App still gets its header", async () => {
    let platform = await boot();
    try {
      // A row as an older version wrote it: the whole transport as plain JSON.
      await platform.db.query(
        `insert into connections (id, name, slug, transport, enabled, policies, builtin, created_at, updated_at)
         values ('conn_older', 'Older', 'older', $1, true, '{}', null, 1, 1)`,
        [JSON.stringify({ type: "http", url, headers: { Authorization: HEADER_SECRET } })],
      );
    } finally {
      await platform.close();
    }
    seen.length = 0;
    platform = await boot();
    try {
      const [row] = await platform.db.query<{ transport: string; transport_enc: string | null }>(
        "select transport, transport_enc from connections where id = 'conn_older'",
      );
      expect(row?.transport).toBe('{"type":"http"}');
      expect(row?.transport_enc).toMatch(/^enc1:/);
      await until(headerArrived, "the older row's header at the App");
    } finally {
      await platform.close();
    }
    // Sealed rows read back after another restart.
    seen.length = 0;
    platform = await boot();
    try {
      await until(headerArrived, "the header after a restart");
    } finally {
      await platform.close();
    }
  }, 60_000);
});

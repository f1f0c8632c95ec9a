/**
 * What a member sees of a connection's transport: the kind of App and where it is, never how it is reached
 * (a URL's query or userinfo, a command's arguments, headers, environment). An admin sees it all (with
 * header and environment values hidden).
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memberTransport } from "@/server/apps/transports";
import { makePerson, startTestPlatform, type TestPlatform } from "../helpers/platform";

const SERVER = path.join(import.meta.dirname, "fixtures", "trace-server.mjs");
const TOKEN = "sk_member_hidden_41c9";
let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform();
  await t.caller(t.admin).connections.create({
    name: "Tokened",
    transport: { type: "stdio", command: process.execPath, args: [SERVER, `--token=${TOKEN}`], env: { TOKEN } },
  });
}, 60_000);
afterAll(() => t?.close());

describe("connection transports", () => {
  it("a member sees the command's file name only; an admin sees its arguments", async () => {
    const member = await makePerson(t, "member");
    const seen = (await t.caller(member).connections.list()).find((c) => c.name === "Tokened")!;
    expect(seen.transport).toEqual({ type: "stdio", command: path.basename(process.execPath) });
    expect(seen.tools.map((x) => x.name)).toContain("note");
    expect(JSON.stringify(await t.caller(member).connections.list())).not.toContain(TOKEN);
    const full = (await t.caller(t.admin).connections.list()).find((c) => c.name === "Tokened")!;
    expect(full.transport).toEqual({
      type: "stdio",
      command: process.execPath,
      args: [SERVER, `--token=${TOKEN}`],
      env: { TOKEN: "••••" },
    });
  });

  it("an http transport keeps its origin, path and OAuth mode; query, userinfo, fragment and headers are gone", () => {
    expect(
      memberTransport({
        type: "http",
        url: "https://user:pw@mcp.example.com:8443/v1/mcp?key=abc#frag",
        headers: { authorization: "Bearer x" },
        oauth: { mode: "person", clientId: "cid", clientSecret: "sec" },
      }),
    ).toEqual({ type: "http", url: "https://mcp.example.com:8443/v1/mcp", oauth: { mode: "person" } });
    expect(memberTransport({ type: "builtin", app: "notes" } as never)).toEqual({ type: "builtin", app: "notes" });
  });
});

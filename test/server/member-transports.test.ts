/**
 * What a member sees of a connection's transport: the kind of App and where it is, never how it is reached
 * (a URL's query or userinfo, a command's arguments, headers, environment). An admin sees it all (with
 * header and environment values hidden).
 */
import { type AddressInfo, createServer } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hideTransportSecrets, memberTransport } from "@/server/apps/transports";
import { MEMBER_CONNECTION_ERROR } from "@/server/services/connections";
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

  it("a failed connection's error hides its env values, and the vault's secrets; a member reads no diagnosis", async () => {
    const ENV_SECRET = "envsecret-7f3a91";
    const VAULT_SECRET = "vaultsecret-55e2c0";
    const ARG = "argsecret-0b8d44";
    await t.caller(t.admin).connections.create({
      name: "Leaky",
      transport: {
        type: "stdio",
        command: "sh",
        args: ["-c", `echo "pw=$PW vault=${VAULT_SECRET} arg=$0" >&2; exit 3`, ARG],
        env: { PW: ENV_SECRET },
      },
    });
    await t.caller(t.admin).vault.create({ name: "leaky/secret", secret: VAULT_SECRET, allow: [] });
    const leaky = async (who: typeof t.admin) =>
      (await t.caller(who).connections.list()).find((c) => c.name === "Leaky")!;
    await expect.poll(async () => (await leaky(t.admin)).status, { timeout: 20_000 }).toBe("failed");
    const admin = await leaky(t.admin);
    // The admin's diagnosis stays: what the App wrote, as two sentences, with the env value and the vault's secret hidden.
    expect(admin.error).toMatch(/\. Its last output: pw=•••• vault=⟦hidden:leaky\/secret⟧ arg=argsecret-0b8d44/);
    const member = await makePerson(t, "member");
    const seen = await leaky(member);
    expect(seen.error).toBe(MEMBER_CONNECTION_ERROR);
    const text = JSON.stringify(await t.caller(member).connections.list());
    for (const secret of [ENV_SECRET, VAULT_SECRET, ARG]) expect(text).not.toContain(secret);
  });

  it("an http connection's error hides the URL's userinfo, query and fragment and the header values", () => {
    const transport = {
      type: "http" as const,
      url: "http://alice:hunter22@127.0.0.1:9/mcp?token=SEKRET123&x=on#frag-secret",
      headers: { authorization: "Bearer hdr-secret-99" },
    };
    const text = hideTransportSecrets(
      `Request cannot be constructed from a URL that includes credentials: ${transport.url} (Bearer hdr-secret-99)`,
      transport,
    );
    for (const secret of ["alice", "hunter22", "SEKRET123", "frag-secret", "hdr-secret-99"])
      expect(text).not.toContain(secret);
    expect(text).toContain("http://••••:••••@127.0.0.1:9/mcp?••••#••••");
  });

  it("an App that refuses the connection says why (the socket's code), not only fetch's 'fetch failed'", async () => {
    // A port nothing listens on (found free, then closed).
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise((resolve) => probe.close(resolve));
    await t.caller(t.admin).connections.create({
      name: "Closed port",
      transport: { type: "http", url: `http://127.0.0.1:${port}/mcp` },
    });
    const closed = async () => (await t.caller(t.admin).connections.list()).find((c) => c.name === "Closed port")!;
    await expect.poll(async () => (await closed()).status, { timeout: 20_000 }).toBe("failed");
    expect((await closed()).error).toContain("ECONNREFUSED");
  });
});

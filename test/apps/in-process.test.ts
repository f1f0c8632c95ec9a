/**
 * The in-process link to the built-in Apps (server/apps/in-process.ts): every message arrives on a later
 * microtask, never inside the sender's `send`; what the client sends reaches the App as a JSON copy (the
 * App never holds our objects), and what the App sends reaches the client as it is (no copy: a built-in
 * App builds each answer afresh). Then the real thing: a built-in App over the link still refuses a bad
 * argument with the same message, and its answers are what the client reads.
 */
import { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBuiltinHost } from "@/server/apps/builtin/host";
import { linkedPair } from "@/server/apps/in-process";
import { type Db, openDb } from "@/server/db/client";
import { migrate } from "@/server/db/migrate";

type Message = Parameters<NonNullable<ReturnType<typeof linkedPair>["client"]["onmessage"]>>[0];

describe("linkedPair", () => {
  it("copies the client's messages, hands the App's over as they are, each on a later microtask", async () => {
    const { client, server } = linkedPair();
    const atServer: Message[] = [];
    const atClient: Message[] = [];
    server.onmessage = (m) => atServer.push(m);
    client.onmessage = (m) => atClient.push(m);
    await server.start();
    await client.start();
    const request = {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "list-events", arguments: { day: "2026-10-23" } },
    } as Message;
    const answer = {
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text: "{}" }], structuredContent: { events: [] } },
    } as Message;
    const sent = [client.send(request), server.send(answer)];
    // Not delivered inside `send`.
    expect(atServer).toEqual([]);
    expect(atClient).toEqual([]);
    await Promise.all(sent);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(atServer).toEqual([request]);
    expect(atServer[0]).not.toBe(request);
    expect((atServer[0] as { params: unknown }).params).not.toBe((request as { params: unknown }).params);
    expect(atClient).toHaveLength(1);
    expect(atClient[0]).toBe(answer);
    await client.close();
    await expect(server.send(answer)).rejects.toThrow("The in-process App is closed.");
  });
});

describe("a built-in App over the link", () => {
  let db: Db;
  let client: Client;
  let close: () => Promise<void>;
  beforeAll(async () => {
    db = await openDb({});
    await migrate(db);
    const host = await startBuiltinHost(db);
    client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(host.connect("work-calendar"));
    close = async () => {
      await client.close();
      await host.close();
      await db.close();
    };
  });
  afterAll(() => close?.());

  it("refuses a bad argument with the App's own validation message", async () => {
    const result = await client.callTool({ name: "list-events", arguments: { day: 20261023 } });
    expect(result.isError).toBe(true);
    const text = (result.content as { type: string; text: string }[])[0]?.text ?? "";
    expect(text).toContain("Input validation error");
    expect(text).toContain("day");
  });

  it("answers a good call with a fresh result each time, checked against the output schema", async () => {
    const first = await client.callTool({ name: "list-events", arguments: { day: "2026-10-23" } });
    const second = await client.callTool({ name: "list-events", arguments: { day: "2026-10-23" } });
    expect(first.isError).toBeFalsy();
    expect(first).toEqual(second);
    expect(first).not.toBe(second);
    expect(first.structuredContent).not.toBe(second.structuredContent);
    const events = (first.structuredContent as { events: unknown[] }).events;
    expect(JSON.parse((first.content as { text: string }[])[0]!.text)).toEqual({ events });
  });
});

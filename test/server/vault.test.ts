/**
 * The vault: a real MCP server that echoes its input (the `everything` preset's echo, over stdio)
 * receives the real secret while the program, the record, the decision and the database only ever see
 * the reference or `⟦hidden:…⟧`; a target the entry does not allow gives VaultDenied and nothing is
 * sent; the raw database files never contain the secret; replay after the decision does not resend.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import type { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makePerson, startTestPlatform, type TestPlatform } from "../helpers/platform";

const SECRET = "ghp_SuperSecretValue_8c1f2a9d";
let t: TestPlatform;

beforeAll(async () => {
  t = await startTestPlatform({ inMemoryDb: false, codeMode: true });
  const caller = t.caller(t.admin);
  const view = await t.platform.apps.add({ name: "Everything", transport: { type: "preset", preset: "everything" } });
  await t.platform.apps.setPolicies(view.id, { echo: "allow" });
  await caller.vault.create({
    name: "github/token",
    secret: SECRET,
    allow: [{ connection: "everything", tool: "echo" }],
  });
}, 60_000);
afterAll(() => t?.close());

async function echoOps(runId: string) {
  return t.platform.db.query("select id from app_operations where run_id = $1 and tool = 'echo'", [runId]);
}

describe("vault", () => {
  it("lists names and targets, never the secret; names are validated; rotate replaces in place", async () => {
    const caller = t.caller(t.admin);
    const entries = await caller.vault.list();
    expect(entries).toEqual([
      expect.objectContaining({
        name: "github/token",
        reference: "⟦vault:github/token⟧",
        allow: [{ connection: "everything", tool: "echo" }],
      }),
    ]);
    expect(JSON.stringify(entries)).not.toContain(SECRET);
    const bad = await caller.vault.create({ name: "Bad Name", secret: "x" }).catch((e: TRPCError) => e);
    expect((bad as TRPCError).code).toBe("BAD_REQUEST");
    expect((bad as TRPCError).message).toContain("name");
    const dup = await caller.vault
      .create({ name: "github/token", secret: "another-secret" })
      .catch((e: TRPCError) => e);
    expect((dup as TRPCError).code).toBe("CONFLICT");
    const member = await makePerson(t, "member");
    expect(
      await t
        .caller(member)
        .vault.list()
        .then(
          () => "ok",
          (e: TRPCError) => e.code,
        ),
    ).toBe("FORBIDDEN");
    await caller.vault.create({ name: "temp/one", secret: "first-secret" });
    const rotated = await caller.vault.rotate({ name: "temp/one", secret: "second-secret" });
    expect(rotated.updatedAt).toBeGreaterThanOrEqual(rotated.createdAt);
    await caller.vault.remove({ name: "temp/one" });
  });

  it("targets must name an App that exists and, for a connected App, one of its tools: a typo is a 400 naming the field", async () => {
    const caller = t.caller(t.admin);
    const refused = async (allow: { connection: string; tool: string }[]) =>
      (await caller.vault
        .create({ name: "typo/token", secret: "typo-secret-1", allow })
        .catch((e: TRPCError) => e)) as TRPCError;
    const noApp = await refused([{ connection: "nosuchapp", tool: "tool" }]);
    expect(noApp.code).toBe("BAD_REQUEST");
    expect(noApp.message).toContain('allow[0].connection: there is no App "nosuchapp"');
    expect(noApp.message).toContain("everything");
    const noTool = await refused([
      { connection: "everything", tool: "echo" },
      { connection: "notes", tool: "writenote" },
    ]);
    expect(noTool.message).toBe(
      'allow[1].tool: Notes has no tool "writenote" (its tools: list-notes, read-note, write-note)',
    );
    expect((await caller.vault.list()).map((e) => e.name)).not.toContain("typo/token");
    // Every way of naming a target still works: the App's id, slug or name; the tool's name, binding name or binding.
    const ok = await caller.vault.create({
      name: "typo/token",
      secret: "typo-secret-1",
      allow: [
        { connection: "Notes", tool: "write_note" },
        { connection: "notes", tool: "notes.read_note" },
      ],
    });
    expect(ok.allow).toHaveLength(2);
    const rotated = await caller.vault
      .rotate({ name: "typo/token", secret: "typo-secret-2", allow: [{ connection: "email", tool: "sendmail" }] })
      .catch((e: TRPCError) => e);
    expect((rotated as TRPCError).message).toContain('allow[0].tool: Email has no tool "sendmail"');
    await caller.vault.remove({ name: "typo/token" });
  });

  it("a program sees the reference; the call waits for a decision that shows the reference; the App gets the secret; the program sees ⟦hidden:…⟧", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    const code = `const ref = vault.github.token
const names = Object.keys(vault)
const r = await apps.everything.echo({ message: "token=" + ref })
return { ref, names, unknown: vault.nope, echoed: r.content[0].text }`;
    const waiting = await caller.codeRuns.runOnServer({ chatId: chat.id, code, reason: "use the token" });
    expect(waiting.status).toBe("Waiting");
    const [decision] = await caller.decisions.list({ chatId: chat.id, status: "pending" });
    expect(decision!.request.app.arguments).toEqual({ message: "token=⟦vault:github/token⟧" });
    expect(JSON.stringify(decision)).not.toContain(SECRET);
    expect(await echoOps(waiting.id)).toHaveLength(0);

    await caller.decisions.decide({ id: decision!.id, decision: "allow" });
    await t.platform.settled();
    const done = await caller.codeRuns.byId({ id: waiting.id });
    expect(done.status).toBe("Completed");
    const value = (done.result as { value: { ref: string; names: string[]; unknown?: string; echoed: string } }).value;
    expect(value.ref).toBe("⟦vault:github/token⟧");
    expect(value.names).toEqual(["github"]);
    expect(value.unknown).toBeUndefined();
    // The echo server answered with what it received: the real secret, which came back hidden.
    expect(value.echoed).toContain("token=⟦hidden:github/token⟧");
    expect(JSON.stringify(done)).not.toContain(SECRET);
    expect(await echoOps(waiting.id)).toHaveLength(1);

    // Replay after the decision did not resend: one App operation for the echo, across both attempts.
    const calls = await t.platform.db.query("select idx from code_run_calls where run_id = $1", [waiting.id]);
    expect(calls).toHaveLength(1);
  });

  it("a run keeps the vault names it started with: an entry added while it waits does not change its replay", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    const code = `const names = Object.keys(vault)
const r = await apps.everything.echo({ message: names.join(",") + " " + vault.github.token })
return { names, echoed: r.content[0].text }`;
    const waiting = await caller.codeRuns.runOnServer({ chatId: chat.id, code });
    expect(waiting.status).toBe("Waiting");
    await caller.vault.create({ name: "added/later", secret: "later-secret", allow: [] });
    const [decision] = await caller.decisions.list({ chatId: chat.id, status: "pending" });
    await caller.decisions.decide({ id: decision!.id, decision: "allow" });
    await t.platform.settled();
    const done = await caller.codeRuns.byId({ id: waiting.id });
    expect(done.status).toBe("Completed");
    expect((done.result as { value: { names: string[] } }).value.names).toEqual(["github"]);
    await caller.vault.remove({ name: "added/later" });
  });

  it("a target the entry does not allow gives VaultDenied and nothing is sent", async () => {
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    const code = `try {
  await apps.everything.get_sum({ a: 1, b: 2, note: vault.github.token })
  return "sent"
} catch (error) {
  return { name: error.name, message: error.message }
}`;
    const record = await caller.codeRuns.runOnServer({ chatId: chat.id, code });
    expect(record.status).toBe("Completed");
    expect((record.result as { value: { name: string } }).value.name).toBe("VaultDenied");
    expect(record.calls[0]?.rejection?.name).toBe("VaultDenied");
    expect(record.calls[0]?.app).toBeNull();
    expect(await t.platform.db.query("select id from app_operations where run_id = $1", [record.id])).toHaveLength(0);
    expect(await caller.decisions.list({ chatId: chat.id, status: "pending" })).toEqual([]);
  });

  it("the raw database files never contain the secret, nor a marker used in code, arguments and results", async () => {
    const MARKER = "MARKER-1d9e77-plain-text";
    const caller = t.caller(t.admin);
    const chat = await caller.chats.create({});
    const record = await caller.codeRuns.runOnServer({
      chatId: chat.id,
      reason: MARKER,
      code: `// ${MARKER}
const r = await apps.everything.echo({ message: "${MARKER}" })
console.log(r.content[0].text)
return r`,
    });
    expect(record.status).toBe("Completed");
    expect(JSON.stringify(record.calls[0]?.app?.result)).toContain(MARKER);
    await t.platform.db.query("checkpoint");
    const hits: string[] = [];
    let plainSeen = false;
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const p = path.join(dir, name);
        if (statSync(p).isDirectory()) walk(p);
        else {
          const bytes = readFileSync(p);
          if (bytes.includes(Buffer.from(SECRET)) || bytes.includes(Buffer.from(MARKER))) hits.push(p);
          if (bytes.includes(Buffer.from(record.id))) plainSeen = true;
        }
      }
    };
    walk(path.join(t.dataDir, "pglite"));
    // The search does read the rows: the run's id (stored in clear) is found in the files.
    expect(plainSeen).toBe(true);
    expect(hits).toEqual([]);
  });
});

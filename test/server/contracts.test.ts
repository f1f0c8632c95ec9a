/**
 * Every request is parsed by its contract schema before a service runs (tRPC `.input`): a bad field is a
 * BAD_REQUEST whose message and `details.fields` name it, one case per domain. Each case is input a
 * service without the schema would accept or answer differently (stored, NOT_FOUND, UNAVAILABLE, a
 * database error), so dropping a procedure's schema fails its case.
 */
import type { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlatform, type TestPlatform } from "../helpers/platform";

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform();
});
afterAll(() => t?.close());

type Fields = { field: string; message: string }[];
async function refusal(call: Promise<unknown>): Promise<{ code: string; message: string; fields: Fields }> {
  const error = (await call.then(
    () => null,
    (e: unknown) => e,
  )) as TRPCError | null;
  expect(error, "the call was accepted").not.toBeNull();
  const details = (error!.cause as { details?: { fields?: Fields } } | undefined)?.details;
  return { code: error!.code, message: error!.message, fields: details?.fields ?? [] };
}

describe("one schema per request, named fields in the refusal", () => {
  it("refuses a bad field in every domain before its service runs", async () => {
    const admin = t.caller(t.admin);
    const chat = await admin.chats.create({ title: "contracts" });
    const { id: userId } = await admin.users.create({ name: "Contract person", role: "member" });
    const settings = await admin.settings.get();
    const cases: [string, () => Promise<unknown>, string][] = [
      ["chats.update", () => admin.chats.update({ id: chat.id, pinned: "yes" as never }), "pinned"],
      ["chats.share", () => admin.chats.share({ chatId: chat.id, userId: 5 as never }), "userId"],
      ["users.create", () => admin.users.create({ name: "Owner", role: "owner" as never }), "role"],
      ["apiKeys.create", () => admin.apiKeys.create({ userId, name: "", permissions: [] }), "name"],
      ["apiKeys.revoke", () => admin.apiKeys.revoke({ id: 5 as never }), "id"],
      [
        "settings.update",
        () => admin.settings.update({ expectedVersion: settings.version, codeMode: { timeoutMs: 5 } }),
        "codeMode.timeoutMs",
      ],
      ["connections.codeApi", () => admin.connections.codeApi({ query: 5 as never }), "query"],
      [
        "connections.update",
        () => admin.connections.update({ id: "conn_work_calendar", patch: { enabled: "no" as never } }),
        "patch.enabled",
      ],
      ["decisions.decide", () => admin.decisions.decide({ id: "dec_none", decision: "maybe" as never }), "decision"],
      ["decisions.list", () => admin.decisions.list({ status: "open" as never }), "status"],
      ["vault.create", () => admin.vault.create({ name: "short/one", secret: "short" }), "secret"],
      [
        "appOperations.answer",
        () => admin.appOperations.answer({ operationId: "op_none", answer: { action: "maybe" } as never }),
        "answer.action",
      ],
      ["turns.send", () => admin.turns.send({ chatId: chat.id, message: "   " }), "message"],
      ["codeRuns.runOnServer", () => admin.codeRuns.runOnServer({ chatId: chat.id, code: 5 as never }), "code"],
    ];
    for (const [procedure, call, field] of cases) {
      const r = await refusal(call());
      expect(r.code, procedure).toBe("BAD_REQUEST");
      expect(r.message, procedure).toContain(`${field}:`);
      expect(
        r.fields.map((f) => f.field),
        procedure,
      ).toContain(field);
    }
    // A field of the wrong type says so; "is required" is kept for a field that is missing.
    expect((await refusal(admin.chats.create({ title: 123 as never }))).message).toBe("title: title must be a string");
    expect((await refusal(admin.chats.share({ chatId: chat.id, userId: 5 as never }))).message).toBe(
      "userId: userId must be a string",
    );
    expect((await refusal(admin.chats.share({ chatId: chat.id } as never))).message).toBe("userId: userId is required");
    // A missing transport is required, not "expected nonoptional"; an unknown field of an App's change is named,
    // with where policies go.
    expect((await refusal(admin.connections.create({ name: "No transport" } as never))).message).toBe(
      "transport: transport is required",
    );
    const unknown = await refusal(
      admin.connections.update({ id: "conn_work_calendar", patch: { policies: { list_events: "deny" } } as never }),
    );
    expect(unknown.message).toContain(
      'unknown field "policies": an App\'s change takes name, enabled and untrustedContent',
    );
    expect(unknown.message).toContain("PATCH /v1/connections/:id/policies");
    // A run without code is told it is required; a misspelt field is named, not dropped (a "langauge" of
    // typescript would otherwise run the program as JavaScript), and no run is made.
    expect((await refusal(admin.codeRuns.runOnServer({ chatId: chat.id } as never))).message).toBe(
      "code: code is required",
    );
    const misspelt = await refusal(
      admin.codeRuns.runOnServer({ chatId: chat.id, code: "return 1", langauge: "typescript" } as never),
    );
    expect(misspelt).toMatchObject({ code: "BAD_REQUEST" });
    expect(misspelt.message).toBe('unknown field "langauge": a run takes code, reason and language');
    expect(await admin.codeRuns.listByChat({ chatId: chat.id })).toEqual([]);
    // The same for every create or change whose misspelt field would quietly fall back to a default.
    const person = await admin.users.create({ name: "Strict fields", role: "member" });
    const misspellings: [string, () => Promise<unknown>, string][] = [
      [
        "chats.create",
        () => admin.chats.create({ titel: "x" } as never),
        'unknown field "titel": a new chat takes title only',
      ],
      [
        "turns.send",
        () => admin.turns.send({ chatId: chat.id, message: "hi", mesage: "x" } as never),
        'unknown field "mesage": a turn takes message only',
      ],
      [
        "users.create",
        () => admin.users.create({ name: "Strict two", role: "member", rol: "admin" } as never),
        'unknown field "rol": a person takes name and role',
      ],
      [
        "apiKeys.create",
        () => admin.apiKeys.create({ userId: person.id, name: "k", permissions: [], scopes: [] } as never),
        'unknown field "scopes": a key takes userId, name and permissions',
      ],
      [
        "connections.create",
        () => admin.connections.create({ name: "Strict", transport: { kind: "preset" }, policy: "allow" } as never),
        'unknown field "policy": an App takes name and transport',
      ],
      [
        "vault.create",
        () => admin.vault.create({ name: "strict/one", secret: "12345678", usableby: { roles: ["member"] } } as never),
        'unknown field "usableby": a secret takes name, secret, allow and usableBy',
      ],
      [
        "vault.rotate",
        () => admin.vault.rotate({ name: "strict/one", secret: "12345678", alow: [] } as never),
        'unknown field "alow": a rotation takes name, secret, allow and usableBy',
      ],
      [
        "vault.setAccess",
        () => admin.vault.setAccess({ name: "strict/one", usableBy: {}, secret: "x" } as never),
        'unknown field "secret": a change of access takes usableBy only',
      ],
    ];
    for (const [procedure, call, message] of misspellings) {
      const r = await refusal(call());
      expect(r.code, procedure).toBe("BAD_REQUEST");
      expect(r.message, procedure).toBe(message);
    }
    expect((await admin.users.list()).map((u) => u.name)).not.toContain("Strict two");
    expect((await admin.vault.list()).map((e) => e.name)).not.toContain("strict/one");
    const calendar = (await admin.connections.list()).find((c) => c.id === "conn_work_calendar");
    expect(calendar?.tools.find((tool) => tool.name === "list-events")?.policy).toBe("allow");
    expect((await admin.chats.byId({ id: chat.id })).pinned).toBe(false);
    expect((await admin.settings.get()).version).toBe(settings.version);
    expect((await admin.vault.list()).map((e) => e.name)).not.toContain("short/one");
  });

  it("a stranger is refused before the schema looks at the input", async () => {
    const stranger = t.caller(null);
    const r = await refusal(stranger.users.create({ name: "x", role: "owner" as never }));
    expect(r.code).toBe("UNAUTHORIZED");
  });
});

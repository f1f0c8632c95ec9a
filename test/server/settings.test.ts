import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readModelApiKey } from "@/server/services/settings";
import { makePerson, startTestPlatform, type TestPlatform } from "../helpers/platform";

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform();
});
afterAll(() => t?.close());

const code = (p: Promise<unknown>) =>
  p.then(
    () => "ok",
    (e: unknown) => (e instanceof TRPCError ? e.code : String(e)),
  );

describe("platform settings", () => {
  it("starts with Code Mode off and the documented defaults", async () => {
    const s = await t.caller(t.admin).settings.get();
    expect(s.codeMode).toEqual({
      enabled: false,
      timeoutMs: 10000,
      memoryMb: 64,
      outputBytes: 65536,
      maxPendingCalls: 16,
      maxServerRuns: 4,
      maxServerRunsPerUser: 2,
      maxQueuedRunsPerUser: 16,
      traceArguments: false,
    });
  });

  it("needs a caller, and platform.admin", async () => {
    expect(await code(t.caller(null).settings.get())).toBe("UNAUTHORIZED");
    const member = await makePerson(t, "member");
    expect(await code(t.caller(member).settings.get())).toBe("FORBIDDEN");
    expect(await code(t.caller(member).settings.update({ expectedVersion: 1 }))).toBe("FORBIDDEN");
  });

  it("goes up one version per change, refuses a stale version with the current settings, names bad fields", async () => {
    const caller = t.caller(t.admin);
    const before = await caller.settings.get();
    const after = await caller.settings.update({
      expectedVersion: before.version,
      codeMode: { enabled: true, timeoutMs: 30000 },
    });
    expect(after.version).toBe(before.version + 1);
    expect(after.codeMode).toMatchObject({ enabled: true, timeoutMs: 30000, memoryMb: 64 });

    const stale = await caller.settings
      .update({ expectedVersion: before.version, codeMode: { timeoutMs: 500 } })
      .catch((e: TRPCError) => e);
    expect(stale).toBeInstanceOf(TRPCError);
    expect((stale as TRPCError).code).toBe("CONFLICT");
    expect((stale as TRPCError).message).toContain(`version ${after.version}`);
    expect((await caller.settings.get()).codeMode.timeoutMs).toBe(30000);

    for (const [field, value] of [
      ["timeoutMs", 99],
      ["timeoutMs", 60001],
      ["memoryMb", 0],
      ["memoryMb", 1025],
      ["outputBytes", 1023],
      ["outputBytes", 10485761],
      ["maxPendingCalls", 0],
      ["maxPendingCalls", 129],
      ["maxServerRuns", 0],
      ["maxServerRuns", 65],
      ["maxServerRunsPerUser", 0],
      ["maxServerRunsPerUser", 65],
      ["maxQueuedRunsPerUser", -1],
      ["maxQueuedRunsPerUser", 1001],
      ["timeoutMs", 1.5],
      ["enabled", "yes"],
    ] as const) {
      const error = await caller.settings
        .update({ expectedVersion: after.version, codeMode: { [field]: value } })
        .catch((e: TRPCError) => e);
      expect((error as TRPCError).code, `${field}=${value}`).toBe("BAD_REQUEST");
      expect((error as TRPCError).message).toContain(`codeMode.${field}`);
    }
    const unknownField = await caller.settings
      .update({ expectedVersion: after.version, codeMode: { speed: 3 } as never })
      .catch((e: TRPCError) => e);
    expect((unknownField as TRPCError).code).toBe("BAD_REQUEST");
    expect((await caller.settings.get()).version).toBe(after.version);

    const edges = await caller.settings.update({
      expectedVersion: after.version,
      codeMode: { timeoutMs: 100, memoryMb: 1024, outputBytes: 1024, maxPendingCalls: 128 },
    });
    expect(edges.version).toBe(after.version + 1);
  });

  it("a stored model key goes only where it was entered for: a new provider or base URL forgets it", async () => {
    const caller = t.caller(t.admin);
    const key = () => readModelApiKey(t.platform.db, t.platform.open);
    const save = async (model: Record<string, unknown>) =>
      caller.settings.update({ expectedVersion: (await caller.settings.get()).version, model: model as never });
    const local = { provider: "openai-compatible", baseURL: "http://127.0.0.1:9/v1", model: "m" };
    expect((await save({ ...local, apiKey: "sk-local-123456" })).model?.apiKeySet).toBe(true);
    // Same endpoint, another model name: the key stays.
    expect((await save({ ...local, model: "m2" })).model?.apiKeySet).toBe(true);
    expect(await key()).toBe("sk-local-123456");
    // Another base URL without a key: forgotten, not sent there.
    expect((await save({ ...local, baseURL: "http://127.0.0.1:10/v1" })).model?.apiKeySet).toBe(false);
    expect(await key()).toBeUndefined();
    // Another provider without a key: forgotten too; with a key: that key.
    await save({ ...local, apiKey: "sk-local-123456" });
    expect((await save({ provider: "openai", model: "gpt-x" })).model?.apiKeySet).toBe(false);
    expect((await save({ provider: "openai", model: "gpt-x", apiKey: "sk-openai-654321" })).model?.apiKeySet).toBe(
      true,
    );
    expect(await key()).toBe("sk-openai-654321");
    await save({ provider: "openai", model: "gpt-y" });
    expect(await key()).toBe("sk-openai-654321");
    await caller.settings.update({ expectedVersion: (await caller.settings.get()).version, model: null });
  });

  it("a model's base URL must be http(s)", async () => {
    const caller = t.caller(t.admin);
    for (const baseURL of ["file:///etc/passwd", "data:text/plain,hi", "javascript:alert(1)", "ftp://x/v1"]) {
      const error = await caller.settings
        .update({
          expectedVersion: (await caller.settings.get()).version,
          model: { provider: "openai-compatible", baseURL, model: "m" },
        })
        .catch((e: TRPCError) => e);
      expect((error as TRPCError).code, baseURL).toBe("BAD_REQUEST");
      expect((error as TRPCError).message).toContain("model.baseURL must be an http(s) URL");
    }
  });

  it("a save that changes nothing keeps the version, so another tab's next save is not refused as stale", async () => {
    const caller = t.caller(t.admin);
    const before = await caller.settings.get();
    const same = await caller.settings.update({ expectedVersion: before.version, codeMode: { ...before.codeMode } });
    expect(same.version).toBe(before.version);
    const changed = await caller.settings.update({
      expectedVersion: before.version,
      codeMode: { memoryMb: before.codeMode.memoryMb > 1 ? before.codeMode.memoryMb - 1 : 2 },
    });
    expect(changed.version).toBe(before.version + 1);
    await caller.settings.update({
      expectedVersion: changed.version,
      codeMode: { memoryMb: before.codeMode.memoryMb },
    });
  });
});

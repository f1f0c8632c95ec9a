import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
});

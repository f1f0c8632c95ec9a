/**
 * A finished run's runtime is freed after its outcome is handed back (engine.ts `spent`): in a task of its own,
 * or when the module's next run starts, whichever comes first, so the caller does not wait for the free and a
 * finished run's heap never counts against the next run's memory limit.
 */
import { describe, expect, it } from "vitest";
import { spentRunCount } from "@/worker/engine";
import { fakeHost, getEngine, input, parseValue } from "./helpers";

const task = () => new Promise((resolve) => setTimeout(resolve, 5));

describe("freeing a finished run", () => {
  it("hands back the outcome first and frees the runtime in a later task", async () => {
    const engine = await getEngine();
    await task();
    expect(spentRunCount()).toBe(0);
    expect(parseValue(await engine.run(input("return 1 + 1"), fakeHost()))).toBe(2);
    expect(spentRunCount()).toBe(1);
    await task();
    expect(spentRunCount()).toBe(0);
  });

  it("frees it before the next run in the module at the latest: back-to-back runs near the cap both complete", async () => {
    const engine = await getEngine();
    await task();
    // 20 MiB of a 32 MiB cap each, kept by the finished runtime until it is freed: one fits, two do not.
    const big = 'globalThis.kept = "x".repeat(20 * 1048576); return kept.length;';
    const first = await engine.run(input(big), fakeHost());
    expect(spentRunCount()).toBe(1);
    const second = await engine.run(input(big), fakeHost());
    expect([first, second].map((o) => [o.status, "reason" in o ? o.reason : ""])).toEqual([
      ["completed", ""],
      ["completed", ""],
    ]);
    const both = 'const s = "x".repeat(20 * 1048576); const t = "y".repeat(20 * 1048576); return s.length + t.length;';
    const fails = await engine.run(input(both), fakeHost());
    expect(fails).toMatchObject({ status: "failed", reason: "Memory" });
  });
});

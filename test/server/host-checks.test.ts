/**
 * The host checks a run's calls share (code-runs/rows.ts runForCall): remembered for a few seconds, then
 * dropped as new ones come, and never holding the request they were made in. Before, expired checks stayed
 * until 10,000 had gathered, each holding its promise and with it the async context of the request that
 * made it (Next's request store, the response): ~300 MB of finished requests on a busy server.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { hostCheckCount } from "@/server/services/code-runs/rows";
import { pageRunWithOneCall, startTestPlatform, type TestPlatform } from "../helpers/platform";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform({ codeMode: true });
});
afterAll(() => t?.close());
afterEach(() => {
  vi.useRealTimers();
});

/** A run its page hosts, with its first call made: that attempt's host check is remembered. */
const runWithOneCall = (title: string) => pageRunWithOneCall(t.caller(t.admin), title);

describe("host checks", () => {
  it("are dropped once expired, as new ones come", async () => {
    const before = hostCheckCount(t.platform);
    for (let i = 0; i < 5; i++) await runWithOneCall(`Checks ${i}`);
    expect(hostCheckCount(t.platform)).toBe(before + 5);
    // Past their 5 s: the next check drops every one of them (the old map kept them until 10,000).
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 6_000 });
    await runWithOneCall("After");
    expect(hostCheckCount(t.platform)).toBe(1);
  });

  it("do not keep the async context of the request that made them", async () => {
    const requests = new AsyncLocalStorage<{ body: Uint8Array }>();
    let store: WeakRef<object> | undefined;
    // The run's start and its first call inside a request's context (as Next's request store is).
    await requests.run({ body: new Uint8Array(1024) }, async () => {
      store = new WeakRef(requests.getStore()!);
      await runWithOneCall("Context");
    });
    expect(hostCheckCount(t.platform)).toBeGreaterThan(0);
    await t.platform.settled();
    for (let i = 0; i < 5 && store?.deref(); i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      gc();
    }
    expect(store?.deref()).toBeUndefined();
  });
});

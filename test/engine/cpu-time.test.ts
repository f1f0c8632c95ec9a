/**
 * The time limit counts the program's running time, not time its thread waited for a core: where the host
 * has a CPU clock for the thread (Node worker threads on Linux), a run whose wall-clock time is spent asks
 * that clock before it fails `Timeout`, and the watchdog leaves its worker alone. The engine is driven here
 * with a stand-in clock (a thread that ran a quarter of the time); the real clock and the real worker
 * threads under contention are tested below.
 */
import os from "node:os";
import { afterAll, describe, expect, it } from "vitest";
import { spawnNodeWorker } from "@/worker/node-port";
import { SandboxSupervisor } from "@/worker/supervisor";
import { threadCpuClock } from "@/worker/thread-clock";
import { buildWorkerBundle, fakeHost, getEngine, input, parseValue } from "./helpers";

describe("the engine's time limit with a thread CPU clock", () => {
  it("does not fail a program at the wall clock's limit while its thread's CPU clock is under it", async () => {
    const engine = await getEngine();
    // The thread got a quarter of a core: its CPU clock runs at a quarter of the wall clock.
    const reads: number[] = [];
    const threadCpuMs = () => {
      const ms = performance.now() / 4;
      reads.push(ms);
      return ms;
    };
    const waited: number[] = [];
    const outcome = await engine.run(input("while (true) {}", { limits: { timeoutMs: 100 } }), {
      ...fakeHost(),
      threadCpuMs,
      onWaited: (ms) => waited.push(ms),
    });
    expect(outcome).toMatchObject({
      status: "failed",
      reason: "Timeout",
      message: "the program ran longer than 100 ms",
    });
    // Read at the start, asked when the wall clock's 100 ms were spent (it said ~25 ms), and the run failed
    // only once the CPU clock had counted the 100 ms.
    expect(reads.length).toBeGreaterThanOrEqual(3);
    expect(reads.at(-1)! - reads[0]!).toBeGreaterThanOrEqual(100);
    expect(waited.length).toBeGreaterThanOrEqual(1);
    expect(waited[0]!).toBeGreaterThan(0);
  });

  it("goes by the wall clock when the CPU clock fails or runs with it", async () => {
    const engine = await getEngine();
    const broken = await engine.run(input("while (true) {}", { limits: { timeoutMs: 100 } }), {
      ...fakeHost(),
      threadCpuMs: () => {
        throw new Error("no clock");
      },
    });
    expect(broken).toMatchObject({ status: "failed", reason: "Timeout" });
    const waited: number[] = [];
    const plain = await engine.run(input("while (true) {}", { limits: { timeoutMs: 100 } }), {
      ...fakeHost(),
      threadCpuMs: () => performance.now() + 1_000,
      onWaited: (ms) => waited.push(ms),
    });
    expect(plain).toMatchObject({ status: "failed", reason: "Timeout" });
    expect(waited).toEqual([]);
    const quick = await engine.run(input("return 5", { limits: { timeoutMs: 100 } }), {
      ...fakeHost(),
      threadCpuMs: () => performance.now(),
    });
    expect(parseValue(quick)).toBe(5);
  });
});

describe("the thread CPU clock (Linux)", () => {
  const clock = threadCpuClock();
  it.runIf(os.platform() === "linux")("counts a busy loop and not a sleep", async () => {
    expect(clock).toBeTypeOf("function");
    const start = clock!();
    const deadline = Date.now() + 10_000;
    while (clock!() - start < 20 && Date.now() < deadline) {
      // spin until the thread has run 20 ms
    }
    expect(clock!() - start).toBeGreaterThanOrEqual(20);
    const before = clock!();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(clock!() - before).toBeLessThan(200);
  });
});

describe("worker threads that wait for a core", () => {
  let supervisor: SandboxSupervisor | undefined;
  afterAll(() => supervisor?.dispose());

  it.runIf(os.platform() === "linux")(
    "time out by their own running time, and the watchdog does not terminate them",
    async () => {
      buildWorkerBundle();
      // Four times as many busy programs as cores: each thread waits for a core about three quarters of the
      // time, so the wall clock passes the limit (and the watchdog's budget of limit + grace) long before the CPU
      // clock does. The grace is the product's (1 s): the worker reports its waiting well within it.
      const n = Math.max(4, os.availableParallelism() * 4);
      let spawns = 0;
      supervisor = new SandboxSupervisor({
        spawn: () => {
          spawns++;
          return spawnNodeWorker();
        },
        maxWorkers: n,
        maxIdle: n,
        graceMs: 1000,
      });
      await supervisor.prewarm(input("").limits, n);
      expect(spawns).toBe(n);
      const outcomes = await Promise.all(
        Array.from({ length: n }, () =>
          supervisor!.run(input("while (true) {}", { limits: { timeoutMs: 400 } }), fakeHost()),
        ),
      );
      for (const outcome of outcomes)
        expect(outcome).toMatchObject({
          status: "failed",
          reason: "Timeout",
          message: "the program ran longer than 400 ms",
        });
      // Every program was stopped by its own interrupt handler: no worker was terminated (or replaced).
      expect(supervisor.size).toBe(n);
      expect(parseValue(await supervisor.run(input("return 7"), fakeHost()))).toBe(7);
      expect(spawns).toBe(n);
    },
    60_000,
  );
});

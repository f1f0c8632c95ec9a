/**
 * The supervisor over real Node worker threads (dist/worker/node-worker.mjs, built first): forwarding of
 * calls and logs, pooling, the watchdog for built-ins the interrupt handler never reaches, cancel,
 * crashed workers, and the same outcome as the in-process engine for the same input.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { HostCallAnswer, LogLine } from "@/contracts/engine";
import type { Engine } from "@/worker/engine";
import { spawnNodeWorker } from "@/worker/node-port";
import { SandboxSupervisor, type WorkerPort } from "@/worker/supervisor";
import { serveEngine } from "@/worker/worker-host";
import {
  buildWorkerBundle,
  CALENDAR_PROGRAM,
  calendarOutcome,
  fakeHost,
  getEngine,
  input,
  parseValue,
} from "./helpers";

let spawned = 0;
let supervisor: SandboxSupervisor;

beforeAll(() => {
  buildWorkerBundle();
  supervisor = new SandboxSupervisor({
    spawn: () => {
      spawned++;
      return spawnNodeWorker();
    },
    graceMs: 300,
  });
});

afterAll(() => supervisor.dispose());

describe("SandboxSupervisor with Node worker threads", () => {
  it("runs the calendar program, forwards calls and logs, and reuses the worker", async () => {
    const host = fakeHost();
    const lines: LogLine[] = [];
    const outcome = await supervisor.run(input(CALENDAR_PROGRAM), {
      call: host.call,
      onLog: (line) => lines.push(line),
    });
    expect(parseValue(outcome)).toEqual(["Quarterly review", "Offsite planning"]);
    expect(lines).toEqual([{ level: "log", text: "events 4" }]);
    expect(host.calls.map((c) => c.index)).toEqual([0, 1]);
    const before = spawned;
    expect(parseValue(await supervisor.run(input("return 1"), fakeHost()))).toBe(1);
    expect(spawned).toBe(before);
  });

  it("gives the same calls, logs and value as the in-process engine", async () => {
    const code = `${CALENDAR_PROGRAM.replace("return", "const r =")}
      console.log(new Date().toString(), Math.random());
      return { r, t: Date.now(), n: Math.random() };`;
    const inWorker = fakeHost();
    const inProcess = fakeHost();
    const a = await supervisor.run(input(code), inWorker);
    const b = await (await getEngine()).run(input(code), inProcess);
    expect(a).toEqual(b);
    expect(inWorker.calls).toEqual(inProcess.calls);
  });

  it("gives the same log lines, text() and errors with lone surrogates as the in-process engine (U+FFFD either way)", async () => {
    // The worker runs our QuickJS build, the in-process engine the stock one: their string copies out differ
    // unless ours decodes like the stock one.
    const code = `console.log("\\ud800"); console.log("short\\udc00"); console.log("x\\ud800" + "y".repeat(20));
      text("\\ud800abc");
      throw new Error("bad \\udfff")`;
    const inWorker = await supervisor.run(input(code), fakeHost());
    const inProcess = await (await getEngine()).run(input(code), fakeHost());
    const f = "\ufffd\ufffd\ufffd";
    expect(inWorker).toMatchObject({
      status: "failed",
      logs: [{ text: f }, { text: `short${f}` }, { text: `x${f}${"y".repeat(20)}` }],
      output: [{ type: "text", text: `${f}abc` }],
    });
    expect((inWorker as { message: string }).message).toContain(`bad ${f}`);
    const { completionOrder: _a, ...worker } = inWorker;
    const { completionOrder: _b, ...local } = inProcess;
    expect(worker).toEqual(local);
  });

  it("terminates a worker stuck in an uninterruptible built-in and fails Timeout", async () => {
    for (const code of [
      "return Array.prototype.indexOf.call({ length: 2 ** 32 - 1 }, 1);",
      "return (7n ** 300000n).toString().length;",
    ]) {
      const started = Date.now();
      const outcome = await supervisor.run(input(code, { limits: { timeoutMs: 200 } }), fakeHost());
      expect(outcome, code).toMatchObject({ status: "failed", reason: "Timeout" });
      expect(Date.now() - started).toBeLessThan(5000);
      expect(parseValue(await supervisor.run(input("return 2"), fakeHost()))).toBe(2);
    }
  });

  it("cancels a run waiting on a call that never settles", async () => {
    const controller = new AbortController();
    const pending = supervisor.run(input(CALENDAR_PROGRAM), {
      call: () => new Promise(() => undefined),
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 50);
    expect(await pending).toMatchObject({ status: "failed", reason: "Cancelled" });
    expect(parseValue(await supervisor.run(input("return 3"), fakeHost()))).toBe(3);
  });

  it("delivers a log line while the program is still busy: a line before a long computation is seen at once", async () => {
    // The line is the only way the host learns the program started its loop: it cancels on seeing it. Were the
    // line held until the slice ends, the run would only end at its 30 s limit, after this test's timeout.
    const controller = new AbortController();
    const seen: string[] = [];
    const outcome = await supervisor.run(
      input(`console.log("spin"); let n = 0; while (true) { n++ }`, { limits: { timeoutMs: 30_000 } }),
      {
        call: fakeHost().call,
        signal: controller.signal,
        onLog: (line) => {
          seen.push(line.text);
          controller.abort();
        },
      },
    );
    expect(outcome).toMatchObject({ status: "failed", reason: "Cancelled" });
    expect(seen).toEqual(["spin"]);
  }, 10_000);

  it("cancels a busy run, and the next run works", async () => {
    const controller = new AbortController();
    const pending = supervisor.run(input("while (true) {}", { limits: { timeoutMs: 20_000 } }), {
      call: fakeHost().call,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    expect(await pending).toMatchObject({ status: "failed", reason: "Cancelled" });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(parseValue(await supervisor.run(input("return 4"), fakeHost()))).toBe(4);
  });

  it("fails Unavailable when a worker dies, and spawns a new one for the next run", async () => {
    let broken = true;
    const local = new SandboxSupervisor({
      spawn: (): WorkerPort => {
        if (broken) {
          broken = false;
          return spawnNodeWorker("/nonexistent/node-worker.mjs");
        }
        return spawnNodeWorker();
      },
      graceMs: 200,
    });
    try {
      expect(await local.run(input("return 1"), fakeHost())).toMatchObject({ status: "failed", reason: "Unavailable" });
      expect(parseValue(await local.run(input("return 5"), fakeHost()))).toBe(5);
    } finally {
      local.dispose();
    }
  });

  it("stops the run when the host's call handler throws", async () => {
    const outcome = await supervisor.run(input(CALENDAR_PROGRAM), {
      call: (req) => (req.index === 1 ? Promise.reject(new Error("boom")) : Promise.resolve(calendarOutcome(req))),
    });
    expect(outcome).toMatchObject({ status: "failed", reason: "Unavailable" });
  });
});

describe("the compiled .wasm handed to worker threads", () => {
  it("is what the worker instantiates: a module that is not QuickJS makes its engine fail to load", async () => {
    const notQuickJs = new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]));
    const local = new SandboxSupervisor({ spawn: () => spawnNodeWorker(undefined, notQuickJs) });
    try {
      const outcome = await local.run(input("return 1"), fakeHost());
      expect(outcome).toMatchObject({ status: "failed", reason: "Unavailable" });
    } finally {
      local.dispose();
    }
    const shared = new SandboxSupervisor({ spawn: () => spawnNodeWorker() });
    try {
      expect(parseValue(await shared.run(input("return [1, 2].map((x) => x * 3)"), fakeHost()))).toEqual([3, 6]);
    } finally {
      shared.dispose();
    }
  });
});

describe("messages per run", () => {
  it("sends all the calls of one slice in one message and answers ready together in one message", async () => {
    const sent: string[] = [];
    const received: { type: string; calls?: unknown[] }[] = [];
    const local = new SandboxSupervisor({
      spawn: () => {
        const port = spawnNodeWorker();
        return {
          ...port,
          post: (message) => {
            sent.push(message.type);
            port.post(message);
          },
          onMessage: (listener) =>
            port.onMessage((message) => {
              received.push(message as { type: string });
              listener(message);
            }),
        };
      },
    });
    try {
      const echo = { call: (req: { argsJson: string }) => Promise.resolve({ type: "ok", resultJson: req.argsJson }) };
      await local.prewarm({ timeoutMs: 5000, memoryMb: 64, outputBytes: 65536, maxPendingCalls: 16 });
      sent.length = 0;
      received.length = 0;
      const fanout = `const r = await Promise.all(Array.from({ length: 10 }, (_, i) => apps.call("work_calendar.list_events", { i })));
        return r.map((x) => x.i);`;
      expect(parseValue(await local.run(input(fanout), echo as never))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(sent).toEqual(["run", "answers"]);
      expect(received.map((m) => m.type)).toEqual(["calls", "done"]);
      expect(received[0]?.calls).toHaveLength(10);

      sent.length = 0;
      received.length = 0;
      const sequential = `let n = 0; for (let i = 0; i < 20; i++) n += (await apps.call("work_calendar.list_events", { i })).i; return n;`;
      expect(parseValue(await local.run(input(sequential), echo as never))).toBe(190);
      // One message each way per awaited call, and no busy/idle notices: 42 in all.
      expect(sent.length + received.length).toBe(42);

      // Log lines leave in batches (growing while they come fast): 300 lines of one slice are a few "logs"
      // messages, not 300, and all arrive, in order.
      sent.length = 0;
      received.length = 0;
      const lines: string[] = [];
      const logged = `for (let i = 0; i < 300; i++) console.log("line " + i); return 1;`;
      const outcome = await local.run(input(logged), {
        ...echo,
        onLog: (line: { text: string }) => lines.push(line.text),
      } as never);
      expect(parseValue(outcome)).toBe(1);
      const types = received.map((m) => m.type);
      expect(types.at(-1)).toBe("done");
      expect(types.slice(0, -1).every((t) => t === "logs")).toBe(true);
      expect(types.length).toBeLessThan(150);
      expect(lines).toEqual(Array.from({ length: 300 }, (_, i) => `line ${i}`));
      expect(outcome.logs.map((l) => l.text)).toEqual(lines);
    } finally {
      local.dispose();
    }
  });
});

/** A worker host served in this process over a message channel with no error events (like a browser worker). */
function inProcessWorker(load: () => Promise<Engine>): WorkerPort {
  const toWorker: ((message: unknown) => void)[] = [];
  const toDriver: ((message: unknown) => void)[] = [];
  let alive = true;
  const deliver = (listeners: ((message: unknown) => void)[], message: unknown) =>
    queueMicrotask(() => {
      if (!alive) return;
      for (const listener of listeners) listener(structuredClone(message));
    });
  serveEngine(
    { post: (message) => deliver(toDriver, message), onMessage: (listener) => toWorker.push(listener) },
    load,
  );
  return {
    post: (message) => deliver(toWorker, message),
    onMessage: (listener) => toDriver.push(listener),
    onError: () => undefined,
    terminate: () => {
      alive = false;
    },
  };
}

describe("a worker whose engine cannot load", () => {
  it("reports it with its ready message, so the run fails Unavailable at once instead of after the ready timeout", async () => {
    const local = new SandboxSupervisor({
      spawn: () => inProcessWorker(() => Promise.reject(new Error("WebAssembly is disabled"))),
    });
    try {
      const started = Date.now();
      const outcome = await local.run(input("return 1"), fakeHost());
      expect(outcome).toMatchObject({ status: "failed", reason: "Unavailable" });
      expect((outcome as { message: string }).message).toContain("WebAssembly is disabled");
      expect(Date.now() - started).toBeLessThan(1000);
      expect(await local.run(input("return 1"), fakeHost())).toMatchObject({ status: "failed", reason: "Unavailable" });
    } finally {
      local.dispose();
    }
  });

  it("answers every later run Unavailable instead of queueing it", async () => {
    const posted: unknown[] = [];
    let send: (message: unknown) => void = () => undefined;
    serveEngine({ post: (message) => posted.push(message), onMessage: (listener) => (send = listener) }, async () => {
      throw new Error("no memory");
    });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(posted).toEqual([{ type: "ready", error: "the sandbox engine could not be loaded: no memory" }]);
    send({ type: "run", nonce: "n1", input: input("return 1") });
    expect(posted[1]).toMatchObject({
      type: "done",
      nonce: "n1",
      outcome: { status: "failed", reason: "Unavailable" },
    });
  });
});

/** A host whose calls wait until released (all, or one run's); records which run (by its `{ run }` argument) called, in order. */
function gatedHost() {
  const started: number[] = [];
  const gates = new Map<number, () => void>();
  const open = (run: number) => {
    gates.get(run)?.();
    gates.delete(run);
  };
  return {
    started,
    release: () => [...gates.keys()].forEach(open),
    releaseRun: open,
    call: (req: { argsJson: string }) =>
      new Promise<HostCallAnswer>((resolve) => {
        const { run } = JSON.parse(req.argsJson) as { run: number };
        started.push(run);
        gates.set(run, () => resolve({ type: "ok", resultJson: req.argsJson }));
      }),
  };
}

const GATED = (run: number) => `return (await apps.work_calendar.list_events({ run: ${run} })).run;`;

describe("the worker pool", () => {
  it("frees the worker of a run paused on a decision: it ends waiting and the next run takes the same worker", async () => {
    let count = 0;
    const local = new SandboxSupervisor({
      spawn: () => {
        count++;
        return spawnNodeWorker();
      },
      maxWorkers: 1,
    });
    try {
      const paused = local.run(input(GATED(1)), { call: async () => ({ type: "pause" }) });
      const next = local.run(input("return 2"), fakeHost());
      expect(await paused).toMatchObject({ status: "waiting", index: 0 });
      expect(parseValue(await next)).toBe(2);
      expect(count).toBe(1);
    } finally {
      local.dispose();
    }
  });

  it("never has more than maxWorkers workers; runs beyond wait in the supervisor's queue, in order", async () => {
    let count = 0;
    const local = new SandboxSupervisor({
      spawn: () => {
        count++;
        return spawnNodeWorker();
      },
      maxWorkers: 2,
    });
    try {
      const host = gatedHost();
      const runs = [0, 1, 2, 3, 4].map((run) => local.run(input(GATED(run)), host));
      expect(local.queued).toBe(3);
      await vi.waitFor(() => expect([...host.started].sort()).toEqual([0, 1]), { timeout: 20_000 });
      // Each finished run frees one worker, which goes to the longest-waiting queued run.
      for (const [finished, next] of [
        [0, 2],
        [1, 3],
        [2, 4],
      ] as const) {
        host.releaseRun(finished);
        await vi.waitFor(() => expect(host.started.length).toBe(next + 1), { timeout: 20_000 });
        expect(host.started[next]).toBe(next);
      }
      host.release();
      expect((await Promise.all(runs)).map(parseValue)).toEqual([0, 1, 2, 3, 4]);
      expect(count).toBe(2);
      expect(local.size).toBe(2);
    } finally {
      local.dispose();
    }
  });

  it("takes a cancelled run out of the queue, and fails queued runs Unavailable on dispose", async () => {
    const local = new SandboxSupervisor({ spawn: () => spawnNodeWorker(), maxWorkers: 1 });
    const host = gatedHost();
    const first = local.run(input(GATED(0)), host);
    const controller = new AbortController();
    const cancelled = local.run(input(GATED(1)), { call: host.call, signal: controller.signal });
    const third = local.run(input(GATED(2)), host);
    expect(local.queued).toBe(2);
    controller.abort();
    expect(await cancelled).toMatchObject({ status: "failed", reason: "Cancelled" });
    expect(local.queued).toBe(1);
    await vi.waitFor(() => expect(host.started).toEqual([0]), { timeout: 20_000 });
    host.release();
    expect(parseValue(await first)).toBe(0);
    await vi.waitFor(() => expect(host.started).toEqual([0, 2]), { timeout: 20_000 });
    const fourth = local.run(input(GATED(3)), host);
    local.dispose();
    expect(await third).toMatchObject({ status: "failed", reason: "Unavailable" });
    expect(await fourth).toMatchObject({ status: "failed", reason: "Unavailable" });
    expect(host.started).toEqual([0, 2]);
  });

  it("starts warmWorkers at creation and runs on them without spawning more", async () => {
    let count = 0;
    const local = new SandboxSupervisor({
      spawn: () => {
        count++;
        return spawnNodeWorker();
      },
      warmWorkers: 3,
      maxIdle: 3,
    });
    try {
      expect(count).toBe(3);
      const host = gatedHost();
      const runs = [0, 1, 2].map((run) => local.run(input(GATED(run)), host));
      await vi.waitFor(() => expect(host.started.length).toBe(3), { timeout: 20_000 });
      host.release();
      expect((await Promise.all(runs)).map(parseValue)).toEqual([0, 1, 2]);
      expect(count).toBe(3);
    } finally {
      local.dispose();
    }
  });

  it("retires idle workers beyond maxIdle after idleRetireMs", async () => {
    const local = new SandboxSupervisor({ spawn: () => spawnNodeWorker(), maxIdle: 1, idleRetireMs: 50 });
    try {
      const host = gatedHost();
      const runs = [0, 1, 2].map((run) => local.run(input(GATED(run)), host));
      await vi.waitFor(() => expect(host.started.length).toBe(3), { timeout: 20_000 });
      expect(local.size).toBe(3);
      host.release();
      await Promise.all(runs);
      await vi.waitFor(() => expect(local.size).toBe(1), { timeout: 20_000 });
      expect(parseValue(await local.run(input("return 9"), fakeHost()))).toBe(9);
    } finally {
      local.dispose();
    }
  });
});

describe("runs of one tenant sharing a worker (runsPerWorker)", () => {
  /** A host whose answers wait until `open()`; `asked` resolves once `n` calls have arrived. */
  function gate(n: number) {
    let open: () => void = () => undefined;
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    let seen = 0;
    let allAsked: () => void = () => undefined;
    const asked = new Promise<void>((resolve) => {
      allAsked = resolve;
    });
    const call = async (req: Parameters<typeof calendarOutcome>[0]): Promise<HostCallAnswer> => {
      seen += 1;
      if (seen === n) allAsked();
      await opened;
      return calendarOutcome(req);
    };
    return { call, asked, open: () => open() };
  }
  const WAITS = `const r = await apps.work_calendar.list_events({ day: "2026-10-23" });`;

  it("packs a tenant's runs onto one worker up to runsPerWorker, and keeps other tenants apart", async () => {
    let count = 0;
    const local = new SandboxSupervisor({
      spawn: () => {
        count++;
        return spawnNodeWorker();
      },
      runsPerWorker: 2,
    });
    try {
      const g = gate(4);
      const code = `${WAITS} return r.structuredContent.events.length;`;
      const runs = [
        local.run(input(code), { call: g.call, tenant: "ann" }),
        local.run(input(code), { call: g.call, tenant: "ann" }),
        local.run(input(code), { call: g.call, tenant: "ann" }),
        local.run(input(code), { call: g.call, tenant: "bob" }),
      ];
      await g.asked;
      // ann's first two share a worker, her third has a worker of its own (the first is full), bob's another.
      expect(count).toBe(3);
      expect(local.size).toBe(3);
      g.open();
      for (const outcome of await Promise.all(runs)) expect(parseValue(outcome)).toBe(2);
      // Runs without a tenant never share: two at once take two workers (the three idle ones).
      const h = gate(2);
      const untenanted = [local.run(input(code), { call: h.call }), local.run(input(code), { call: h.call })];
      await h.asked;
      h.open();
      for (const outcome of await Promise.all(untenanted)) expect(parseValue(outcome)).toBe(2);
      expect(count).toBe(3);
    } finally {
      local.dispose();
    }
  });

  it("shares a worker only once packAfter workers are busy", async () => {
    const local = new SandboxSupervisor({ spawn: () => spawnNodeWorker(), runsPerWorker: 2, packAfter: 2 });
    try {
      const g = gate(3);
      const code = `${WAITS} return r.structuredContent.events.length;`;
      const first = local.run(input(code), { call: g.call, tenant: "ann" });
      await new Promise((resolve) => setTimeout(resolve, 50));
      // One worker busy: ann's second run takes a worker of its own; with two busy, her third shares.
      const second = local.run(input(code), { call: g.call, tenant: "ann" });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(local.size).toBe(2);
      const third = local.run(input(code), { call: g.call, tenant: "ann" });
      await Promise.race([g.asked, first, second, third]);
      expect(local.size).toBe(2);
      g.open();
      for (const outcome of await Promise.all([first, second, third])) expect(parseValue(outcome)).toBe(2);
    } finally {
      local.dispose();
    }
  });

  it("gives each co-tenant its own memory: two runs at once may each use most of their own limit", async () => {
    const local = new SandboxSupervisor({ spawn: () => spawnNodeWorker(), runsPerWorker: 2 });
    try {
      const g = gate(2);
      // 12 MiB each under a 16 MiB limit: in one heap of 24 MiB (16 + the module's 8) the second would run out.
      const code = `const big = new Uint8Array(12 * 1024 * 1024); big[5] = 7; ${WAITS} return big[5] + big.length;`;
      const limits = { memoryMb: 16 };
      const runs = [
        local.run(input(code, { limits }), { call: g.call, tenant: "ann" }),
        local.run(input(code, { limits }), { call: g.call, tenant: "ann" }),
      ];
      // A run that fails (out of memory) settles before both have asked.
      await Promise.race([g.asked, ...runs]);
      g.open();
      for (const outcome of await Promise.all(runs)) expect(parseValue(outcome)).toBe(7 + 12 * 1024 * 1024);
      expect(local.size).toBe(1);
    } finally {
      local.dispose();
    }
  });

  it("a co-tenant stuck in an uninterruptible built-in: its worker is stopped, its co-tenant fails Unavailable, another tenant's run goes on", async () => {
    const local = new SandboxSupervisor({ spawn: () => spawnNodeWorker(), runsPerWorker: 2, graceMs: 200 });
    try {
      const g = gate(2);
      const code = `${WAITS} return r.structuredContent.events.length;`;
      const waiting = local.run(input(code), { call: g.call, tenant: "ann" });
      const other = local.run(input(code), { call: g.call, tenant: "bob" });
      await g.asked;
      const stuck = local.run(
        input("return Array.prototype.indexOf.call({ length: 2 ** 32 - 1 }, 1);", { limits: { timeoutMs: 200 } }),
        {
          call: fakeHost().call,
          tenant: "ann",
        },
      );
      expect(local.size).toBe(2);
      expect(await stuck).toMatchObject({ status: "failed", reason: "Timeout" });
      expect(await waiting).toMatchObject({
        status: "failed",
        reason: "Unavailable",
        message:
          "the sandbox worker was stopped for another program of the same person running on it: it ran past its time limit",
      });
      g.open();
      expect(parseValue(await other)).toBe(2);
      expect(parseValue(await local.run(input("return 6"), { call: fakeHost().call, tenant: "ann" }))).toBe(6);
    } finally {
      local.dispose();
    }
  }, 15_000);

  it("a queued run of a tenant takes the room a finished co-tenant leaves, before the worker is empty", async () => {
    const local = new SandboxSupervisor({ spawn: () => spawnNodeWorker(), runsPerWorker: 2, maxWorkers: 1 });
    try {
      const first = gate(2);
      const code = `${WAITS} return r.structuredContent.events.length;`;
      const quick = local.run(input(code), { call: first.call, tenant: "ann" });
      const long = gate(1);
      const holding = local.run(input(code), { call: long.call, tenant: "ann" });
      await long.asked;
      // The worker is full (2 of ann's runs): bob's run and ann's third wait, in that order.
      const bobs = local.run(input("return 8"), { call: fakeHost().call, tenant: "bob" });
      const third = local.run(input("return 9"), { call: fakeHost().call, tenant: "ann" });
      expect(local.queued).toBe(2);
      first.open();
      expect(parseValue(await quick)).toBe(2);
      // ann's third took the room at once; bob's waits until the worker is empty.
      expect(parseValue(await third)).toBe(9);
      expect(local.queued).toBe(1);
      long.open();
      expect(parseValue(await holding)).toBe(2);
      expect(parseValue(await bobs)).toBe(8);
    } finally {
      local.dispose();
    }
  });
});

describe("the busy-time watchdog", () => {
  for (const sharedMeter of [true, false]) {
    const path = sharedMeter ? "shared-memory meter" : "busy/idle messages";
    it(`terminates a worker stuck in a built-in (${path})`, async () => {
      const local = new SandboxSupervisor({ spawn: () => spawnNodeWorker(), graceMs: 300, sharedMeter });
      try {
        const outcome = await local.run(
          input("return Array.prototype.indexOf.call({ length: 2 ** 32 - 1 }, 1);", { limits: { timeoutMs: 200 } }),
          fakeHost(),
        );
        expect(outcome).toMatchObject({ status: "failed", reason: "Timeout" });
        expect(parseValue(await local.run(input("return 2"), fakeHost()))).toBe(2);
      } finally {
        local.dispose();
      }
    });

    it(`cancels a run busy in guest code (${path})`, async () => {
      // With the meter the worker's interrupt handler reads the cancel flag: the run ends Cancelled and the
      // worker lives on. Without it the worker cannot hear the message while the guest runs: it is terminated
      // after the grace (a minute here with the meter, so only the flag can end the run within the test).
      let spawns = 0;
      const local = new SandboxSupervisor({
        spawn: () => {
          spawns++;
          return spawnNodeWorker();
        },
        graceMs: sharedMeter ? 60_000 : 300,
        sharedMeter,
      });
      try {
        expect(parseValue(await local.run(input("return 1"), fakeHost()))).toBe(1);
        const controller = new AbortController();
        const busy = local.run(input("let n = 0; while (true) { n++ }", { limits: { timeoutMs: 50_000 } }), {
          call: fakeHost().call,
          signal: controller.signal,
        });
        setTimeout(() => controller.abort(), 100);
        expect(await busy).toMatchObject({ status: "failed", reason: "Cancelled", message: "the run was cancelled" });
        expect(parseValue(await local.run(input("return 2"), fakeHost()))).toBe(2);
        expect(spawns).toBe(sharedMeter ? 1 : 2);
      } finally {
        local.dispose();
      }
    }, 20_000);

    it(`does not count time spent waiting for calls (${path})`, async () => {
      let busyMessages = 0;
      const counted = (): WorkerPort => {
        const port = spawnNodeWorker();
        return {
          ...port,
          onMessage: (listener) =>
            port.onMessage((message) => {
              if ((message as { type?: string }).type === "busy") busyMessages++;
              listener(message);
            }),
        };
      };
      const local = new SandboxSupervisor({ spawn: counted, graceMs: 100, sharedMeter });
      try {
        const slow = fakeHost(
          () => new Promise((resolve) => setTimeout(() => resolve({ type: "ok", resultJson: "1" }), 700)),
        );
        const outcome = await local.run(
          input(`return await apps.work_calendar.list_events({});`, { limits: { timeoutMs: 100 } }),
          slow,
        );
        expect(parseValue(outcome)).toBe(1);
        if (sharedMeter) expect(busyMessages).toBe(0);
        else expect(busyMessages).toBeGreaterThan(0);
      } finally {
        local.dispose();
      }
    });
  }
});

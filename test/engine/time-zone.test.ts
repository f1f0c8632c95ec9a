/**
 * A program's dates do not depend on the host's time zone: the page runs in the person's zone and the server
 * (often UTC) re-runs the program after a decision, so a date string read in the host's local time gave the
 * two hosts different instants (and a call built from one a ReplayMismatch). Each host here is a child
 * process with its own TZ, running the built engine in process (the stock build, as the page) and on a
 * worker thread (our build, as the server).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { buildWorkerBundle } from "./helpers";

const PROGRAM = `return [
  new Date("2026-10-23 09:30").toISOString(),
  new Date("Oct 23, 2026 09:30").toISOString(),
  new Date("2026/10/23").toISOString(),
  new Date("Fri Oct 23 2026 09:30:00").toISOString(),
  Date.parse("23 October 2026 09:30:00"),
  new Date("October 23, 2050 12:00").toISOString(),
  new Date("2026/03/08 02:30").toISOString(),
  new Date("2026-11-01 01:30").toISOString(),
  new Date("2026-10-23T09:30").toISOString(),
  new Date("2026-10-23").toISOString(),
  new Date("2026-10-23 09:30 GMT+0200").toISOString(),
  new Date("2026-10-23 09:30 EST").toISOString(),
  new Date("Oct 23 2026 09:30 -0400").toISOString(),
  new Date(String(new Date(Date.UTC(2026, 9, 23, 9, 30)))).toISOString(),
  new Date(new Date(0).setYear(99)).toISOString(),
  new Date(1e12).getTimezoneOffset(),
]`;

const EXPECTED = [
  "2026-10-23T09:30:00.000Z",
  "2026-10-23T09:30:00.000Z",
  "2026-10-23T00:00:00.000Z",
  "2026-10-23T09:30:00.000Z",
  Date.UTC(2026, 9, 23, 9, 30),
  "2050-10-23T12:00:00.000Z",
  "2026-03-08T02:30:00.000Z",
  "2026-11-01T01:30:00.000Z",
  "2026-10-23T09:30:00.000Z",
  "2026-10-23T00:00:00.000Z",
  "2026-10-23T07:30:00.000Z",
  "2026-10-23T14:30:00.000Z",
  "2026-10-23T13:30:00.000Z",
  "2026-10-23T09:30:00.000Z",
  "1999-01-01T00:00:00.000Z",
  0,
];

/** Runs PROGRAM in a child process with `TZ`, in process or on a worker thread; returns its value. */
function runIn(tz: string, host: "in-process" | "worker"): unknown {
  const dist = path.resolve("dist/worker");
  const script = `
    const input = { code: ${JSON.stringify(PROGRAM)}, time: 0, seed: 1, bindings: [], vaultNames: [],
      limits: { timeoutMs: 5000, memoryMb: 32, outputBytes: 65536, maxPendingCalls: 4 } };
    const handlers = { call: async () => ({ type: "ok", resultJson: "{}" }) };
    let outcome;
    if (${JSON.stringify(host)} === "in-process") {
      const { loadEngine } = await import(${JSON.stringify(`${dist}/engine.mjs`)});
      outcome = await (await loadEngine({ preloadMemoryMb: 32 })).run(input, handlers);
    } else {
      const { SandboxSupervisor } = await import(${JSON.stringify(`${dist}/supervisor.mjs`)});
      const { spawnNodeWorker } = await import(${JSON.stringify(`${dist}/node-port.mjs`)});
      const supervisor = new SandboxSupervisor({ spawn: spawnNodeWorker, maxWorkers: 1 });
      outcome = await supervisor.run(input, handlers);
      supervisor.dispose();
    }
    process.stdout.write(JSON.stringify(outcome));
    process.exit(0);`;
  // A file, not --eval: worker threads inherit the process's exec arguments.
  const dir = mkdtempSync(path.join(os.tmpdir(), "openbot-tz-"));
  const file = path.join(dir, "run.mjs");
  writeFileSync(file, script);
  let out: string;
  try {
    out = execFileSync(process.execPath, [file], {
      env: { ...process.env, TZ: tz },
      encoding: "utf8",
      timeout: 60_000,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const outcome = JSON.parse(out) as { status: string; valueJson?: string };
  expect(outcome.status, out).toBe("completed");
  return JSON.parse(outcome.valueJson!);
}

beforeAll(() => buildWorkerBundle());

describe("dates are read the same in every host time zone", () => {
  for (const tz of ["UTC", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"]) {
    it(`in process (the page's build), TZ=${tz}`, () => {
      expect(runIn(tz, "in-process")).toEqual(EXPECTED);
    }, 60_000);
  }
  it("on a worker thread (the server's build), TZ=America/New_York", () => {
    expect(runIn("America/New_York", "worker")).toEqual(EXPECTED);
  }, 60_000);
});

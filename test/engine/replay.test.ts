/**
 * Replay: a run recorded against a host with uneven latencies replays with the same calls, the same
 * interleaving (Promise.all, Promise.race, chains) and the same value without contacting the host;
 * mismatches stop the run before anything is sent; calls beyond the record go to the host.
 */
import { describe, expect, it } from "vitest";
import type { CallRequest, HostCallAnswer, RecordedCall, ReplayLog } from "@/contracts/engine";
import type { EngineOutcome } from "@/worker/engine";
import { fakeHost, getEngine, input, parseValue } from "./helpers";

const PROGRAM = `
const seen = [];
const get = (day) => apps.work_calendar.list_events({ day }).then((r) => { seen.push(r.day); return r; });
const first = await Promise.race([get("A"), get("B")]);
const next = await get("after-" + first.day);
const chains = await Promise.all([
  get("C").then(() => get("C2")),
  get("D").then(() => get("D2")),
  get("E"),
]);
const rand = Math.random();
console.log("first", first.day, "next", next.day);
return { seen, chains: chains.map((r) => r.day), rand };
`;

const DELAYS: Record<string, number> = { A: 30, B: 5, C: 25, D: 5, E: 12, C2: 1, D2: 20 };

function latencyHost() {
  const recorded: RecordedCall[] = [];
  const host = fakeHost(async (req: CallRequest): Promise<HostCallAnswer> => {
    const { day } = JSON.parse(req.argsJson) as { day: string };
    await new Promise((resolve) => setTimeout(resolve, DELAYS[day] ?? 3));
    const outcome = { type: "ok" as const, resultJson: JSON.stringify({ day }) };
    recorded.push({ index: req.index, binding: req.binding, argsJson: req.argsJson, outcome });
    return outcome;
  });
  return { host, recorded };
}

function neverHost() {
  return fakeHost(() => {
    throw new Error("the host must not be called");
  });
}

async function record(): Promise<{ outcome: EngineOutcome; log: ReplayLog; calls: CallRequest[] }> {
  const engine = await getEngine();
  const { host, recorded } = latencyHost();
  const outcome = await engine.run(input(PROGRAM), host);
  return { outcome, log: { calls: recorded, completionOrder: outcome.completionOrder }, calls: host.calls };
}

describe("replay", () => {
  it("reproduces Promise.all, Promise.race and chains exactly without calling the host", async () => {
    const engine = await getEngine();
    const live = await record();
    const value = parseValue(live.outcome) as { seen: string[] };
    expect(value.seen[0]).toBe("B");
    expect(value.seen).toContain("after-B");
    expect(live.calls).toHaveLength(8);

    for (const shuffled of [live.log, { ...live.log, calls: [...live.log.calls].reverse() }]) {
      const host = neverHost();
      const replayed = await engine.run(input(PROGRAM, { replay: shuffled }), host);
      expect(host.calls).toEqual([]);
      expect(replayed.status).toBe("completed");
      expect(parseValue(replayed)).toEqual(value);
      expect(replayed.logs).toEqual(live.outcome.logs);
      expect(replayed.completionOrder).toEqual(live.outcome.completionOrder);
    }
  });

  it("stops with ReplayMismatch before sending anything when a call differs from the record", async () => {
    const engine = await getEngine();
    const live = await record();
    const tampered: ReplayLog = {
      ...live.log,
      calls: live.log.calls.map((c) => (c.index === 2 ? { ...c, argsJson: '{"day":"after-A"}' } : c)),
    };
    const host = neverHost();
    const outcome = await engine.run(input(PROGRAM, { replay: tampered }), host);
    expect(outcome).toMatchObject({ status: "failed", reason: "ReplayMismatch" });
    expect(host.calls).toEqual([]);

    const renamed: ReplayLog = {
      ...live.log,
      calls: live.log.calls.map((c) => (c.index === 0 ? { ...c, binding: "notes.read_note" } : c)),
    };
    const other = neverHost();
    expect(await engine.run(input(PROGRAM, { replay: renamed }), other)).toMatchObject({ reason: "ReplayMismatch" });
    expect(other.calls).toEqual([]);
  });

  it("compares canonical arguments, so key order does not matter", async () => {
    const engine = await getEngine();
    const log: ReplayLog = {
      calls: [
        {
          index: 0,
          binding: "work_calendar.create_event",
          argsJson: '{"title":"x","day":"2026-10-23"}',
          outcome: { type: "ok", resultJson: '{"id":"n"}' },
        },
      ],
      completionOrder: [0],
    };
    const host = neverHost();
    const outcome = await engine.run(
      input(`return (await apps.work_calendar.create_event({ day: "2026-10-23", title: "x" })).id`, { replay: log }),
      host,
    );
    expect(parseValue(outcome)).toBe("n");
  });

  it("sends calls beyond the record to the host, numbered after it", async () => {
    const engine = await getEngine();
    const live = await record();
    const partial: ReplayLog = {
      calls: live.log.calls.filter((c) => c.index < 3),
      completionOrder: live.log.completionOrder.filter((i) => i < 3),
    };
    const { host } = latencyHost();
    const outcome = await engine.run(input(PROGRAM, { replay: partial }), host);
    const { chains, rand } = parseValue(live.outcome) as { chains: string[]; rand: number };
    expect(parseValue(outcome)).toMatchObject({ chains, rand });
    expect(host.calls.map((c) => c.index).sort()).toEqual([3, 4, 5, 6, 7]);
  });

  it("resumes a paused run: recorded calls replay, the decided call goes to the host", async () => {
    const engine = await getEngine();
    const code = `
      const a = await apps.work_calendar.list_events({ day: "2026-10-23" });
      const made = await apps.work_calendar.create_event({ title: "Review", attendees: a.structuredContent.events.length });
      return made.structuredContent;
    `;
    const first = fakeHost((req) =>
      req.binding === "work_calendar.create_event"
        ? { type: "pause" }
        : { type: "ok", resultJson: JSON.stringify({ structuredContent: { events: [1, 2] } }) },
    );
    const paused = await engine.run(input(code), first);
    expect(paused).toMatchObject({ status: "waiting", index: 1 });
    const log: ReplayLog = {
      calls: [
        {
          index: 0,
          binding: "work_calendar.list_events",
          argsJson: first.calls[0]?.argsJson ?? "",
          outcome: { type: "ok", resultJson: JSON.stringify({ structuredContent: { events: [1, 2] } }) },
        },
      ],
      completionOrder: [0],
    };
    const second = fakeHost(() => ({ type: "ok", resultJson: JSON.stringify({ structuredContent: { id: "ev9" } }) }));
    const resumed = await engine.run(input(code, { replay: log }), second);
    expect(parseValue(resumed)).toEqual({ id: "ev9" });
    expect(second.calls).toEqual([
      { index: 1, binding: "work_calendar.create_event", argsJson: '{"attendees":2,"title":"Review"}' },
    ]);

    const denied = fakeHost(() => ({
      type: "error",
      name: "AppCallDenied",
      message: "denied",
      details: { by: "owner" },
    }));
    const outcome = await engine.run(
      input(`try { ${code} } catch (e) { return [e.name, e.details.by]; }`, { replay: log }),
      denied,
    );
    expect(parseValue(outcome)).toEqual(["AppCallDenied", "owner"]);
  });

  it("reports ReplayMismatch when the program never issues a recorded call it must wait behind", async () => {
    const engine = await getEngine();
    const log: ReplayLog = {
      calls: [
        { index: 0, binding: "notes.read_note", argsJson: "{}", outcome: { type: "ok", resultJson: "1" } },
        { index: 1, binding: "notes.read_note", argsJson: "{}", outcome: { type: "ok", resultJson: "2" } },
      ],
      completionOrder: [1, 0],
    };
    const outcome = await engine.run(input(`return await apps.notes.read_note({})`, { replay: log }), neverHost());
    expect(outcome).toMatchObject({ status: "failed", reason: "ReplayMismatch" });
  });
});

/**
 * A program that calls a binding its run does not have fails on QuickJS's bare TypeError ("not a function",
 * "cannot read property … of undefined"); the run's failure message names the misspelled App or tool and
 * the nearest real one (worker/binding-hint.ts), so the model (or a person) can fix the program at once.
 */
import { describe, expect, it } from "vitest";
import { withBindingHint } from "@/worker/binding-hint";
import { fakeHost, getEngine, input } from "./helpers";

async function failure(code: string): Promise<string> {
  const engine = await getEngine();
  const outcome = await engine.run(input(code), fakeHost());
  expect(outcome.status).toBe("failed");
  return outcome.status === "failed" ? `${outcome.reason}: ${outcome.message}` : "";
}

describe("a binding the run does not have", () => {
  it("a misspelled tool: the failure names it and the tool meant", async () => {
    const message = await failure(`return await apps.work_calendar.list_event({ day: "2026-10-23" })`);
    expect(message).toMatch(/^Error: TypeError: /);
    expect(message).toContain(
      "(apps.work_calendar.list_event is not a tool of work_calendar; did you mean apps.work_calendar.list_events?)",
    );
  });

  it("a misspelled App: the failure names it and the App meant", async () => {
    const message = await failure(`return await apps.work_calender.list_events({ day: "2026-10-23" })`);
    expect(message).toContain("(apps.work_calender is not an App this run can call; did you mean apps.work_calendar?)");
  });

  it("a TypeError of the program's own, with every binding real: no hint", async () => {
    const message = await failure(
      `const r = await apps.work_calendar.list_events({ day: "2026-10-23" }); return r.nope.deeper`,
    );
    expect(message).toMatch(/^Error: TypeError: /);
    expect(message).not.toContain("is not a");
  });

  it("only TypeErrors get a hint, and a name far from every real one gets no guess", () => {
    const bindings = ["work_calendar.list_events", "notes.list_notes"];
    expect(withBindingHint("Error: boom", "apps.nothing.here()", bindings)).toBe("Error: boom");
    expect(withBindingHint("TypeError: not a function", "apps.notes.zzzzzzzz()", bindings)).toBe(
      "TypeError: not a function (apps.notes.zzzzzzzz is not a tool of notes)",
    );
    expect(withBindingHint("TypeError: x", "apps.call('a.b'); apps.$search('q')", bindings)).toBe("TypeError: x");
    // Farther than a few edits, but one name holds the other: that one is offered.
    expect(withBindingHint("TypeError: x", "apps.calendar.list_events()", bindings)).toBe(
      "TypeError: x (apps.calendar is not an App this run can call; did you mean apps.work_calendar?)",
    );
  });
});

/**
 * A tool's policy override can be removed again (back to the default from its annotations) through the
 * same schema the registry applies; a bad value is a 400 naming the tool, and so is a name the connected
 * App does not list (a typo would otherwise change nothing that applies).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlatform, type TestPlatform } from "../helpers/platform";

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform();
});
afterAll(() => t?.close());

type View = { name: string; tools: { name: string; policy: string; defaultPolicy: string; overridden: boolean }[] };
const toolOf = (views: View[], tool: string) =>
  views.find((c) => c.name === "Work calendar")!.tools.find((x) => x.name === tool);

describe("tool policies", () => {
  it("an override set to null goes back to the annotation default", async () => {
    const admin = t.caller(t.admin);
    const calendar = (await admin.connections.list()).find((c) => c.name === "Work calendar")!;
    const denied = await admin.connections.setPolicies({ id: calendar.id, policies: { "create-event": "deny" } });
    expect(toolOf([denied], "create-event")).toMatchObject({ policy: "deny", defaultPolicy: "ask", overridden: true });
    const reset = await admin.connections.setPolicies({ id: calendar.id, policies: { "create-event": null } });
    expect(toolOf([reset], "create-event")).toMatchObject({ policy: "ask", defaultPolicy: "ask", overridden: false });
    expect(toolOf(await admin.connections.list(), "list-events")).toMatchObject({ policy: "allow", overridden: false });
  });

  it("a policy that is not allow, ask, deny or null is refused naming the tool", async () => {
    const admin = t.caller(t.admin);
    const calendar = (await admin.connections.list()).find((c) => c.name === "Work calendar")!;
    const error = await admin.connections
      .setPolicies({ id: calendar.id, policies: { "create-event": "maybe" as never } })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "BAD_REQUEST", message: expect.stringContaining("create-event") });
  });

  it("a name the App does not list is refused, naming the tool its binding spelling meant, and changes nothing", async () => {
    const admin = t.caller(t.admin);
    const calendar = (await admin.connections.list()).find((c) => c.name === "Work calendar")!;
    const error = (await admin.connections
      .setPolicies({ id: calendar.id, policies: { "create-event": "deny", list_events: "deny" } })
      .catch((e: unknown) => e)) as { code?: string; message?: string };
    expect(error.code).toBe("BAD_REQUEST");
    expect(error.message).toContain('policies.list_events: Work calendar has no tool named "list_events"');
    expect(error.message).toContain('the binding work_calendar.list_events is the tool "list-events"');
    expect(error.message).toContain("its tools: ");
    const other = (await admin.connections
      .setPolicies({ id: calendar.id, policies: { "no-such-tool": "allow" } })
      .catch((e: unknown) => e)) as { message?: string };
    expect(other.message).toMatch(
      /^policies\.no-such-tool: Work calendar has no tool named "no-such-tool"; its tools: .*list-events/,
    );
    // The refused patch wrote nothing, not even its valid part.
    const views = await admin.connections.list();
    expect(toolOf(views, "create-event")).toMatchObject({ policy: "ask", overridden: false });
    expect(toolOf(views, "list-events")).toMatchObject({ policy: "allow", overridden: false });
    // Clearing a name is always allowed (a stale override of a tool the App no longer lists).
    const cleared = await admin.connections.setPolicies({ id: calendar.id, policies: { list_events: null } });
    expect(toolOf([cleared], "list-events")).toMatchObject({ policy: "allow" });
  });
});

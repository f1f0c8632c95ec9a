/**
 * A tool's policy override can be removed again (back to the default from its annotations) through the
 * same schema the registry applies; a bad value is a 400 naming the tool.
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
});

/**
 * The built-in apps over their real transport (MCP Streamable HTTP on a loopback port): seeded data with
 * structuredContent and a text block, writes, the outbox, arguments rejected before sending, policy
 * defaults and overrides (persisted), rename/disable, and connection slug clashes with warnings.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppRegistry } from "@/server/apps/registry";
import { entryOf, failure, startApps, type TestApps } from "./helpers";

let t: TestApps;
let apps: AppRegistry;
beforeAll(async () => {
  t = await startApps();
  apps = t.registry;
});
afterAll(() => t?.close());

const entry = (binding: string) => entryOf(apps, binding);

describe("built-in apps", () => {
  it("are connected on first start with their bindings", () => {
    const views = apps.connections();
    expect(views.map((c) => [c.name, c.slug, c.status, c.builtin])).toEqual([
      ["Work calendar", "work_calendar", "connected", true],
      ["Notes", "notes", "connected", true],
      ["Email", "email", "connected", true],
    ]);
    expect(apps.tools().map((e) => e.binding)).toEqual([
      "work_calendar.create_event",
      "work_calendar.list_events",
      "notes.list_notes",
      "notes.read_note",
      "notes.write_note",
      "email.list_sent",
      "email.send_email",
    ]);
    expect(views[0]?.transport).toEqual({ type: "builtin", app: "work-calendar" });
    for (const e of apps.tools()) expect(e.outputSchema).toBeDefined();
  });

  it("list-events returns the seeded events of 2026-10-23 as structuredContent and text", async () => {
    const result = await apps.call(entry("work_calendar.list_events"), { day: "2026-10-23" });
    const events = (
      result.structuredContent as {
        events: { id: string; title: string; start: string; end: string; attendees: number }[];
      }
    ).events;
    expect(events.length).toBeGreaterThanOrEqual(3);
    expect(events.some((e) => e.attendees > 10)).toBe(true);
    expect(events.some((e) => e.attendees <= 10)).toBe(true);
    for (const e of events) expect(e.start.startsWith("2026-10-23")).toBe(true);
    expect(result.content).toEqual([{ type: "text", text: JSON.stringify(result.structuredContent) }]);
    const next = await apps.call(entry("work_calendar.list_events"), { day: "2026-10-24" });
    expect((next.structuredContent as { events: unknown[] }).events.length).toBeGreaterThanOrEqual(3);
  });

  it("create-event adds an event to its day", async () => {
    const created = await apps.call(entry("work_calendar.create_event"), {
      title: "Launch retro",
      start: "2026-11-02T10:00:00Z",
      end: "2026-11-02T11:00:00Z",
      attendees: 12,
    });
    const { id } = created.structuredContent as { id: string };
    const listed = await apps.call(entry("work_calendar.list_events"), { day: "2026-11-02" });
    expect(listed.structuredContent).toEqual({
      events: [
        { id, title: "Launch retro", start: "2026-11-02T10:00:00Z", end: "2026-11-02T11:00:00Z", attendees: 12 },
      ],
    });
    const bad = await failure(
      apps.call(entry("work_calendar.create_event"), {
        title: "Backwards",
        start: "2026-11-02T10:00:00Z",
        end: "2026-11-02T09:00:00Z",
        attendees: 1,
      }),
    );
    expect(bad.reason).toBe("tool_error");
    expect(bad.result?.isError).toBe(true);
  });

  it("notes: list, read, write; an unknown note is a tool error", async () => {
    const listed = (await apps.call(entry("notes.list_notes"), {})).structuredContent as {
      notes: { id: string; title: string }[];
    };
    expect(listed.notes.length).toBeGreaterThanOrEqual(2);
    const first = listed.notes[0]!;
    const read = await apps.call(entry("notes.read_note"), { id: first.id });
    expect(read.structuredContent).toMatchObject({ id: first.id, title: first.title, body: expect.any(String) });
    const { id } = (await apps.call(entry("notes.write_note"), { title: "Standup", body: "Ship it." }))
      .structuredContent as { id: string };
    expect((await apps.call(entry("notes.read_note"), { id })).structuredContent).toEqual({
      id,
      title: "Standup",
      body: "Ship it.",
    });
    const missing = await failure(apps.call(entry("notes.read_note"), { id: "note_nope" }));
    expect(missing.reason).toBe("tool_error");
    expect(missing.message).toContain("No note has this id");
  });

  it("email: send-email goes to the outbox that list-sent shows", async () => {
    const { id } = (
      await apps.call(entry("email.send_email"), { to: "priya@example.com", subject: "Agenda", body: "See you at 10." })
    ).structuredContent as { id: string };
    const sent = (await apps.call(entry("email.list_sent"), {})).structuredContent as {
      emails: { id: string; to: string; sentAt: string }[];
    };
    expect(sent.emails[0]).toMatchObject({ id, to: "priya@example.com", subject: "Agenda", body: "See you at 10." });
    expect(Number.isNaN(Date.parse(sent.emails[0]!.sentAt))).toBe(false);
  });

  it("rejects invalid arguments before anything is sent", async () => {
    const before = await t.db.query("select id from emails");
    for (const args of [
      { to: "not an address", subject: "x", body: "y" },
      { to: "a@example.com", subject: "x" },
      { to: "a@example.com", subject: "x", body: 5 },
      "text",
      null,
      [],
    ]) {
      const error = await failure(apps.call(entry("email.send_email"), args));
      expect(error.reason).toBe("invalid_arguments");
    }
    expect(await t.db.query("select id from emails")).toEqual(before);
    const day = await failure(apps.call(entry("work_calendar.list_events"), { day: "tomorrow" }));
    expect(day.message).toContain("args.day ");
  });
});

describe("policies", () => {
  it("default from annotations: only readOnlyHint true allows", () => {
    const policy = Object.fromEntries(apps.tools().map((e) => [e.binding, e.policy]));
    expect(policy).toMatchObject({
      "work_calendar.list_events": "allow",
      "work_calendar.create_event": "ask",
      "notes.list_notes": "allow",
      "notes.read_note": "allow",
      "notes.write_note": "ask",
      "email.send_email": "ask",
      "email.list_sent": "allow",
    });
  });

  it("admin overrides win, persist across a restart, and null restores the default", async () => {
    const view = await apps.setPolicies("conn_work_calendar", { "list-events": "deny", "create-event": "allow" });
    expect(view.tools.find((x) => x.name === "list-events")?.policy).toBe("deny");
    expect(apps.resolve("work_calendar.list_events")?.policy).toBe("deny");
    expect(apps.resolve("work_calendar.create_event")?.policy).toBe("allow");
    const again = await t.restart();
    expect(again.resolve("work_calendar.list_events")?.policy).toBe("deny");
    await again.close();
    await apps.setPolicies("conn_work_calendar", { "list-events": null, "create-event": null });
    expect(apps.resolve("work_calendar.list_events")?.policy).toBe("allow");
    expect(apps.resolve("work_calendar.create_event")?.policy).toBe("ask");
    await expect(apps.setPolicies("conn_work_calendar", { "list-events": "maybe" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      field: "policies.list-events",
    });
    await expect(apps.setPolicies("conn_nope", {})).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("connections", () => {
  it("slug clashes get a deterministic suffix and a warning; reserved slugs too", async () => {
    const twin = await apps.add({ name: "Work  Calendar!", transport: { type: "builtin", app: "work-calendar" } });
    expect(twin.slug).toBe("work_calendar_2");
    expect(twin.warnings.join(" ")).toContain('taken by the older connection "Work calendar"');
    expect(apps.resolve("work_calendar_2.list_events")?.connectionId).toBe(twin.id);
    expect(apps.resolve("work_calendar.list_events")?.connectionId).toBe("conn_work_calendar");
    const call = await apps.add({ name: "Call", transport: { type: "builtin", app: "notes" } });
    expect(call.slug).toBe("call_2");
    expect(call.warnings.join(" ")).toContain("reserved");
    const restarted = await t.restart();
    expect(restarted.connections().map((c) => c.slug)).toEqual([
      "work_calendar",
      "notes",
      "email",
      "work_calendar_2",
      "call_2",
    ]);
    await restarted.close();
    await apps.remove(twin.id);
    await apps.remove(call.id);
    expect(apps.resolve("work_calendar_2.list_events")).toBeUndefined();
  });

  it("rename changes the bindings; disable removes them and calls fail fast", async () => {
    const renamed = await apps.update("conn_notes", { name: "Team notes" });
    expect(renamed.slug).toBe("team_notes");
    expect(apps.resolve("team_notes.list_notes")).toBeDefined();
    const stale = entry("team_notes.list_notes");
    const disabled = await apps.update("conn_notes", { enabled: false });
    expect(disabled.status).toBe("disabled");
    expect(apps.resolve("team_notes.list_notes")).toBeUndefined();
    const started = Date.now();
    expect((await failure(apps.call(stale, {}))).reason).toBe("unavailable");
    expect(Date.now() - started).toBeLessThan(500);
    const back = await apps.update("conn_notes", { name: "Notes", enabled: true });
    expect(back.status).toBe("connected");
    expect(apps.resolve("notes.list_notes")).toBeDefined();
  });

  it("validates names and transports, naming the field", async () => {
    await expect(apps.add({ name: "", transport: { type: "preset", preset: "everything" } })).rejects.toMatchObject({
      field: "name",
    });
    await expect(apps.add({ name: "X", transport: { type: "http", url: "ftp://example.com" } })).rejects.toMatchObject({
      field: "transport.url",
    });
    await expect(apps.add({ name: "X", transport: { type: "preset", preset: "nope" } })).rejects.toMatchObject({
      field: "transport.preset",
    });
    await expect(apps.add({ name: "X", transport: { type: "stdio" } })).rejects.toMatchObject({
      field: "transport.command",
    });
    await expect(apps.add({ name: "X", transport: { type: "stdio", command: "x", extra: 1 } })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
    await expect(apps.add({ name: "X", transport: { type: "smoke" } })).rejects.toMatchObject({
      field: "transport.type",
    });
    await expect(apps.update("conn_nope", { enabled: true })).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(apps.connections()).toHaveLength(3);
  });

  it("hides header and env values in views", async () => {
    const view = await apps.add({
      name: "Secret",
      transport: { type: "http", url: "http://127.0.0.1:9/mcp", headers: { Authorization: "Bearer s3cret" } },
    });
    expect(view.status).toBe("failed");
    expect(view.error).toBeTruthy();
    expect(JSON.stringify(view)).not.toContain("s3cret");
    await apps.remove(view.id);
  });
});

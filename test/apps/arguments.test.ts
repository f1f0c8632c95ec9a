/**
 * What a call whose arguments do not fit the tool's input schema is told (ArgumentChecker): each field named,
 * never its value; a field that breaks its `format` named once, with an example of the format, and not again
 * for the ~400-character pattern zod writes next to the format; any other long pattern cut.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ArgumentChecker } from "@/server/apps/arguments";

/** The input schema the built-in calendar's create-event publishes (zod → JSON Schema, as the SDK does). */
const createEvent = z.toJSONSchema(
  z.object({
    title: z.string().min(1),
    start: z.iso.datetime({ offset: true }),
    end: z.iso.datetime({ offset: true }),
  }),
) as Record<string, unknown>;

describe("argument problems", () => {
  const checker = new ArgumentChecker();

  it("names a field that is not a date-time once, with an example, and neither the pattern nor the value", () => {
    const schema = createEvent as { properties: { start: { pattern?: string; format?: string } } };
    expect(schema.properties.start.format).toBe("date-time");
    expect(schema.properties.start.pattern?.length).toBeGreaterThan(100);
    const problem = checker.check(createEvent, { title: "Walk", start: "10:00", end: "secret-11:00" });
    expect(problem).toBe(
      "args.start must be a date-time string, like 2026-10-23T10:00:00Z; args.end must be a date-time string, like 2026-10-23T10:00:00Z",
    );
    expect(
      checker.check(createEvent, { title: "Walk", start: "2026-10-23T10:00:00Z", end: "2026-10-23T11:00:00+02:00" }),
    ).toBeUndefined();
  });

  it("spells out a short pattern, cuts a long one, and still names missing and unknown fields", () => {
    const long = `^(?:${"[a-z]".repeat(30)})$`;
    const schema = {
      type: "object",
      properties: {
        code: { type: "string", pattern: "^[A-Z]{3}$" },
        slug: { type: "string", pattern: long },
        to: { type: "string", format: "email" },
        kind: { type: "string", format: "made-up-format" },
      },
      required: ["code"],
      additionalProperties: false,
    };
    expect(checker.check(schema, { slug: "x", to: "nobody", extra: 1 })).toBe(
      [
        "args.code is required",
        "args.extra is not allowed",
        `args.slug must match the pattern ${long.slice(0, 60)}…`,
        "args.to must be an email string, like name@example.com",
      ].join("; "),
    );
    expect(checker.check(schema, { code: "ab", kind: "anything" })).toBe('args.code must match pattern "^[A-Z]{3}$"');
  });
});

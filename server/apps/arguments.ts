/** Checks a call's arguments against the tool's input schema before anything is sent to the App. */
import "server-only";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";

export class ArgumentChecker {
  private readonly validators = new WeakMap<object, ValidateFunction | null>();
  private readonly ajv = newAjv();

  /**
   * What is wrong with `args` under `schema`, naming each field (`args.title is required`), or undefined.
   * A schema Ajv cannot compile (remote `$ref`, unknown dialect) is left to the App.
   */
  check(schema: Record<string, unknown>, args: object): string | undefined {
    let validate = this.validators.get(schema);
    if (validate === undefined) {
      try {
        const { $schema: _ignored, $id: _id, ...rest } = schema;
        validate = this.ajv.compile(rest);
      } catch {
        validate = null;
      }
      this.validators.set(schema, validate);
    }
    if (!validate || validate(args)) return undefined;
    return describeProblems(validate.errors ?? []);
  }
}

/** The JSON Schema validator for tool arguments: all errors, formats checked, unknown keywords allowed. */
function newAjv(): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true, validateSchema: false });
  const addFormats = addFormatsModule as unknown as (a: Ajv) => Ajv;
  return addFormats(ajv);
}

const MAX_PROBLEMS = 5;

/** A value of each common string format, shown with a value that does not have it. */
const FORMAT_EXAMPLES: Record<string, string> = {
  "date-time": "2026-10-23T10:00:00Z",
  date: "2026-10-23",
  time: "10:00:00Z",
  email: "name@example.com",
  uri: "https://example.com/path",
  uuid: "123e4567-e89b-12d3-a456-426614174000",
};

/** A pattern longer than this is not spelt out (zod's own date-time pattern runs to ~400 characters). */
const MAX_PATTERN = 60;

/**
 * Ajv's errors as `args.<field> <problem>` (never the values), at most five. A field that breaks its
 * `format` is named once, with an example of the format, not again for the pattern that spells it out
 * (schemas made by zod carry both); a long pattern is cut.
 */
function describeProblems(errors: ErrorObject[]): string {
  const seen = new Set<string>();
  const formatted = new Set(errors.filter((e) => e.keyword === "format").map((e) => e.instancePath));
  for (const e of errors) {
    if (e.keyword === "pattern" && formatted.has(e.instancePath)) continue;
    const at = [
      "args",
      ...e.instancePath
        .split("/")
        .slice(1)
        .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~")),
    ];
    let text: string;
    if (e.keyword === "required") text = `${[...at, String(e.params.missingProperty)].join(".")} is required`;
    else if (e.keyword === "additionalProperties")
      text = `${[...at, String(e.params.additionalProperty)].join(".")} is not allowed`;
    else if (e.keyword === "format") {
      const format = String(e.params.format);
      const example = FORMAT_EXAMPLES[format];
      const article = /^[aeiou]/i.test(format) ? "an" : "a";
      text = `${at.join(".")} must be ${article} ${format} string${example ? `, like ${example}` : ""}`;
    } else if (e.keyword === "pattern" && String(e.params.pattern).length > MAX_PATTERN)
      text = `${at.join(".")} must match the pattern ${String(e.params.pattern).slice(0, MAX_PATTERN)}…`;
    else text = `${at.join(".")} ${e.message ?? "is invalid"}`;
    seen.add(text.slice(0, 200));
    if (seen.size === MAX_PROBLEMS) break;
  }
  return [...seen].join("; ") || "they are invalid";
}

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

/** Ajv's errors as `args.<field> <problem>` (never the values), at most five. */
function describeProblems(errors: ErrorObject[]): string {
  const seen = new Set<string>();
  for (const e of errors) {
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
    else text = `${at.join(".")} ${e.message ?? "is invalid"}`;
    seen.add(text.slice(0, 200));
    if (seen.size === MAX_PROBLEMS) break;
  }
  return [...seen].join("; ") || "they are invalid";
}

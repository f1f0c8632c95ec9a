/**
 * Plain-text names stored in the database (chat titles, user, key, connection names): trimmed, bounded,
 * and free of control characters, so a `\u0000` (which Postgres cannot store) or a stray newline is a 400
 * naming the field rather than a database failure.
 */
import { z } from "zod";

const CONTROL = /[\u0000-\u001f\u007f]/;

/** A required one-line name: `field` names it in every message. */
export function plainName(field: string, max: number) {
  return z
    .string({ error: (issue) => (issue.input === undefined ? `${field} is required` : `${field} must be a string`) })
    .trim()
    .min(1, `${field} must not be empty`)
    .max(max, `${field} must be at most ${max} characters`)
    .refine((s) => !CONTROL.test(s), `${field} must not contain control characters (such as \\u0000 or a line break)`);
}

/** An id a client names (run, chat, turn, user): bounded like every string a client sends. */
export const idField = (name: string) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? `${name} is required` : `${name} must be a string`) })
    .min(1, `${name} is required`)
    .max(200, `${name} is too long`)
    .refine((s) => !CONTROL.test(s), `${name} must not contain control characters (such as \u0000)`);

/**
 * An object that refuses fields it does not take, naming them and saying what it takes (`what`, e.g.
 * "a run takes code, reason and language", or made from the unknown fields): a misspelt optional field
 * would otherwise be dropped and its default used without a word ("langauge", "usableby").
 */
export function onlyFields<Shape extends z.ZodRawShape>(shape: Shape, what: string | ((keys: string[]) => string)) {
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? `unknown field ${issue.keys.map((k) => `"${k}"`).join(", ")}: ${typeof what === "string" ? what : what(issue.keys)}`
        : undefined,
  });
}

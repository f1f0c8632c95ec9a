/**
 * The example programs live in one file (contracts/example-programs.mjs). The README shows the calendar
 * program as text, so this checks it shows that very program; the engine tests run it.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CALENDAR_PROGRAM } from "@/contracts/example-programs.mjs";

describe("example programs", () => {
  it("the README's first program is the calendar program", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    const first = /```js\n([\s\S]*?)\n```/.exec(readme)?.[1];
    expect(first).toBe(CALENDAR_PROGRAM);
  });
});

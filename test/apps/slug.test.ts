/** Binding slugs as SPEC.md defines them, and deterministic clash suffixes. */
import { describe, expect, it } from "vitest";
import { assignSlugs, slugify } from "@/server/apps/slug";

describe("slugs", () => {
  it("lowercase, runs of non-alphanumerics become _, trimmed", () => {
    expect(slugify("Work calendar", "app")).toBe("work_calendar");
    expect(slugify("list-events", "tool")).toBe("list_events");
    expect(slugify("  GitHub  (Enterprise)!! ", "app")).toBe("github_enterprise");
    expect(slugify("__proto__", "app")).toBe("proto");
    expect(slugify("Ünïcode ☃", "app")).toBe("n_code");
    expect(slugify("!!!", "app")).toBe("app");
  });

  it("later clashes get the first free suffix, in the given order", () => {
    expect(assignSlugs(["a", "a", "a_2", "a", "b"])).toEqual([
      { slug: "a" },
      { slug: "a_2", wanted: "a" },
      { slug: "a_2_2", wanted: "a_2" },
      { slug: "a_3", wanted: "a" },
      { slug: "b" },
    ]);
    expect(assignSlugs(["call", "x"], new Set(["call"]))).toEqual([{ slug: "call_2", wanted: "call" }, { slug: "x" }]);
  });
});

import { describe, expect, it } from "vitest";
import { defaultPolicy } from "@/server/apps/registry";

const READ_ONLY = { readOnlyHint: true, openWorldHint: false };

describe("defaultPolicy", () => {
  it("allows a read-only, closed-world tool", () => {
    expect(defaultPolicy("list_events", READ_ONLY)).toBe("allow");
    expect(defaultPolicy("get-sum", READ_ONLY)).toBe("allow");
    expect(defaultPolicy("read_envelope", READ_ONLY)).toBe("allow");
  });
  it("asks for a tool without readOnlyHint, or without annotations", () => {
    expect(defaultPolicy("list_events", { openWorldHint: false })).toBe("ask");
    expect(defaultPolicy("list_events", undefined)).toBe("ask");
  });
  it("asks for a read-only tool that reaches the open world", () => {
    expect(defaultPolicy("fetch_page", { readOnlyHint: true, openWorldHint: true })).toBe("ask");
  });
  it("asks for read-only tools whose names suggest they read secrets (get-env of the everything server)", () => {
    for (const name of [
      "get-env",
      "get_env",
      "getEnv",
      "read_secret",
      "list_tokens",
      "get_environment",
      "show-api-key",
      "dumpCredentials",
    ]) {
      expect(defaultPolicy(name, READ_ONLY), name).toBe("ask");
    }
  });
});

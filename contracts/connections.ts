/** What crosses the boundary for a connection's tool policies: one schema for the service and the registry. */
import { z } from "zod";

export const POLICIES = ["allow", "ask", "deny"] as const;
export type Policy = (typeof POLICIES)[number];

export const policySchema = z.enum(POLICIES, { error: 'a policy must be "allow", "ask" or "deny"' });

/** Per-tool overrides by tool name; `null` removes the override (back to the default from the tool's annotations). */
export const policiesPatchSchema = z.record(
  z.string().min(1, "a tool name must not be empty").max(256, "a tool name must be at most 256 characters"),
  policySchema.nullable(),
  { error: "policies must map tool names to allow, ask, deny or null" },
);
export type PoliciesPatch = z.infer<typeof policiesPatchSchema>;

/**
 * What a client sends to manage Apps (connections): one schema per request for tRPC and REST alike; the
 * tool policies' schema is also the registry's.
 */
import { z } from "zod";
import { idField, onlyFields, plainName } from "./text";

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

/** Adds an App: its name and transport (the registry checks the transport and names a bad field). */
export const addConnectionInput = onlyFields(
  {
    name: plainName("name", 100),
    transport: z.custom<unknown>((value) => value !== undefined, { error: "transport is required" }),
  },
  "an App takes name and transport",
);
export type AddConnectionInput = z.infer<typeof addConnectionInput>;

/** Renames, enables or disables an App (`PATCH /v1/connections/:id`, `connections.update`'s `patch`). */
export const connectionPatchSchema = onlyFields(
  {
    name: plainName("name", 100).optional(),
    enabled: z.boolean({ error: "enabled must be true or false" }).optional(),
    /** Whether this App's answers may carry someone else's instructions (taint); null: back to the default. */
    untrustedContent: z
      .boolean({ error: "untrustedContent must be true, false or null (the default)" })
      .nullable()
      .optional(),
  },
  (keys) =>
    `an App's change takes name, enabled and untrustedContent${keys.includes("policies") ? " (policies have their own route: PATCH /v1/connections/:id/policies, tRPC connections.setPolicies)" : ""}`,
);
export type ConnectionPatch = z.infer<typeof connectionPatchSchema>;

/** The bindings' TypeScript declarations, filtered by a word or one connection (`GET /v1/code-api`). */
export const codeApiInput = z.object({
  query: z.string({ error: "query must be a string" }).max(200, "query must be at most 200 characters").optional(),
  connection: z
    .string({ error: "connection must be a string" })
    .max(100, "connection must be at most 100 characters")
    .optional(),
});
export type CodeApiInput = z.infer<typeof codeApiInput>;

export const connectionIdInput = z.object({ id: idField("id") });
/** REST: the path's id, the body is the patch. */
export const updateConnectionInput = connectionIdInput.extend({ patch: connectionPatchSchema });
/** REST: the path's id, the body is the policies. */
export const setPoliciesInput = connectionIdInput.extend({ policies: policiesPatchSchema });

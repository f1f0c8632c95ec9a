/**
 * The one capability check for every App call — a program's call, the model's direct tool call, or a
 * page reading App data (connections.ts `readAppData`):
 * the caller needs `apps.use`, then the tool's policy decides (action `apps.call`, target
 * `<connectionId>/<toolName>`); a call carrying a vault reference always needs a decision.
 */
import "server-only";
import type { ToolEntry } from "../apps/registry";
import type { Principal } from "./auth";
import { referencedNames } from "./vault";

export type CapabilityVerdict =
  | { verdict: "allow" }
  | { verdict: "ask"; capability: { action: "apps.call"; target: string } }
  | { verdict: "deny"; message: string };

/** `argsJson`: a call whose arguments hold a vault reference always needs a decision (unless denied). */
export function checkAppCall(principal: Principal, entry: ToolEntry, argsJson = "{}"): CapabilityVerdict {
  if (!principal.permissions.has("apps.use")) {
    return { verdict: "deny", message: "The caller lacks the permission apps.use." };
  }
  const target = `${entry.connectionId}/${entry.name}`;
  if (entry.policy === "deny") return { verdict: "deny", message: `The policy of ${entry.binding} denies this call.` };
  if (entry.policy === "ask" || referencedNames(argsJson).length > 0)
    return { verdict: "ask", capability: { action: "apps.call", target } };
  return { verdict: "allow" };
}

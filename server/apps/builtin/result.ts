/**
 * Shared helpers of the built-in apps: a tool result carries its structured content plus the same data as
 * a JSON text block (for clients that read only `content`), and a failure is an `isError` result.
 */
import "server-only";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

export function structured<T extends Record<string, unknown>>(value: T): CallToolResult & { structuredContent: T } {
  return { content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: value };
}

export function toolError(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

export const READ_ONLY = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const;

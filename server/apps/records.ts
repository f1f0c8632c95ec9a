/** Rows of `connections` as records, and the name rule of a connection. */
import "server-only";
import { z } from "zod";
import { policySchema } from "@/contracts/connections";
import type { ConnectionRecord, Policy } from "./connection";
import { ConnectionConfigError } from "./errors";
import { parseTransport, type TransportConfig } from "./transports";

const NameSchema = z.string().trim().min(1, "must not be empty").max(100, "must be at most 100 characters");

export interface ConnectionRow {
  id: string;
  name: string;
  transport: string;
  enabled: boolean;
  policies: string;
  builtin: string | null;
  untrusted_content: boolean | null;
  created_at: string | number;
}

export function parseName(input: unknown): string {
  const parsed = NameSchema.safeParse(input);
  if (!parsed.success)
    throw new ConnectionConfigError(`name: ${parsed.error.issues[0]?.message ?? "is invalid"}`, "name");
  return parsed.data;
}

export function toRecord(row: ConnectionRow): ConnectionRecord {
  let transport: TransportConfig;
  let policies: Record<string, Policy> = {};
  try {
    transport = parseTransport(JSON.parse(row.transport));
  } catch {
    transport = { type: "stdio", command: "/nonexistent/invalid-transport" };
  }
  try {
    const parsed = z.record(z.string(), policySchema).safeParse(JSON.parse(row.policies));
    if (parsed.success) policies = parsed.data;
  } catch {
    policies = {};
  }
  return {
    id: row.id,
    name: row.name,
    transport,
    enabled: row.enabled,
    policies,
    builtin: row.builtin,
    untrustedContent: row.untrusted_content ?? null,
    createdAt: Number(row.created_at),
  };
}

/** Rows of `connections` as records (the transport opened from `transport_enc`), and the name rule of a connection. */
import "server-only";
import { z } from "zod";
import { policySchema } from "@/contracts/connections";
import type { ConnectionRecord, Policy } from "./connection";
import { ConnectionConfigError } from "./errors";
import { parseTransport, type TransportConfig } from "./transports";
import type { TransportBox } from "./types";

const NameSchema = z.string().trim().min(1, "must not be empty").max(100, "must be at most 100 characters");

export interface ConnectionRow {
  id: string;
  name: string;
  transport: string;
  /** The whole transport, sealed (migration 0028); null for a built-in App and rows not yet sealed. */
  transport_enc?: string | null;
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

/** The associated data a connection's sealed transport is bound to. */
export const transportAad = (id: string) => `connections:${id}:transport`;

/**
 * How a transport is stored: sealed whole in `transport_enc` with only its type in the clear, except a
 * built-in App's (no secret in it) or where there is no box (the registry's unit tests).
 */
export function storedTransport(
  id: string,
  transport: TransportConfig,
  box: TransportBox | undefined,
): { transport: string; transportEnc: string | null } {
  if (!box || transport.type === "builtin") return { transport: JSON.stringify(transport), transportEnc: null };
  return {
    transport: JSON.stringify({ type: transport.type }),
    transportEnc: box.seal(transportAad(id), JSON.stringify(transport)),
  };
}

export function toRecord(row: ConnectionRow, box?: TransportBox): ConnectionRecord {
  let transport: TransportConfig;
  let policies: Record<string, Policy> = {};
  try {
    const stored = row.transport_enc ? (box?.open(transportAad(row.id), row.transport_enc) ?? "null") : row.transport;
    transport = parseTransport(JSON.parse(stored));
  } catch {
    // Unreadable (another key, or a row this version cannot parse): the connection fails to start and says so.
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

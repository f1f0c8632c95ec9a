/** The Apps layer's public shapes: a binding (ToolEntry), an admin's view of a connection, registry options. */
import "server-only";
import type { Db } from "../db/client";
import type { ConnectionStatus, Policy } from "./connection";
import type { PendingInput } from "./elicitation";
import type { ConnectionOAuth } from "./oauth/manager";
import type { TransportConfig } from "./transports";

export interface ToolEntry {
  connectionId: string;
  connectionName: string;
  connectionSlug: string;
  /** MCP tool name; `resources/read` and `prompts/get` for the read bindings. */
  name: string;
  /** `<connection slug>.<capability slug>`, e.g. `work_calendar.list_events`. */
  binding: string;
  kind: "tool" | "resource" | "prompt";
  title?: string;
  /** Untrusted text from the App. */
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  policy: Policy;
  /** The policy without an admin's override (from the tool's annotations). */
  defaultPolicy: Policy;
  /**
   * Whether what this tool answers may carry instructions from outside (taint): the connection's flag if
   * an admin set one, else true for an http connection added by URL and for a tool with `openWorldHint: true`.
   */
  untrustedContent?: boolean;
  /** The connection's own flag as in the view (`untrustedContent` there): set, or its default. */
  connectionUntrusted?: boolean;
}

export interface ConnectionView {
  id: string;
  name: string;
  slug: string;
  /** Header and environment values hidden. */
  transport: TransportConfig;
  enabled: boolean;
  builtin: boolean;
  /** Answers of this connection may carry instructions (taint); `untrustedContentSet`: an admin's choice, else null. */
  untrustedContent: boolean;
  untrustedContentSet: boolean | null;
  status: ConnectionStatus;
  /** The MCP revision agreed with the server (`2026-07-28`, `2025-11-25`, …), while connected. */
  protocolVersion?: string;
  /** How long the server said its lists stay fresh (they are listed again after it), if it said. */
  listTtlMs?: number;
  error?: string;
  tools: {
    name: string;
    binding: string;
    description: string;
    policy: Policy;
    defaultPolicy: Policy;
    overridden: boolean;
    kind: ToolEntry["kind"];
    readOnlyHint: boolean;
    untrustedContent: boolean;
  }[];
  resources: { uri: string; name: string; description?: string; mimeType?: string }[];
  prompts: {
    name: string;
    description?: string;
    arguments?: { name: string; description?: string; required?: boolean }[];
  }[];
  /** Slug clashes and similar things an admin should see. */
  warnings: string[];
  /** An OAuth App: its mode, and whether the connection waits for an admin's sign-in. */
  oauth?: { mode: "shared" | "person"; needsSignIn: boolean };
  createdAt: number;
}

export interface AppRegistryOptions {
  db: Db;
  dataDir: string;
  /** Deadline of one call. Default 30000. */
  callTimeoutMs?: number;
  /** Deadline of connecting and listing. Default 15000. */
  connectTimeoutMs?: number;
  /** How long an App's question to a person stays open. Default 600000 (10 min). */
  inputTimeoutMs?: number;
  /** Reconnect backoff after a failure: first delay, doubling up to `maxMs`. Default 500 ms to 30000 ms. */
  reconnect?: { minMs?: number; maxMs?: number };
  /** Called when an App asks for input during a call (the call fails with `input_required`). */
  onElicitation?: (input: PendingInput) => void;
  /** OAuth sign-ins of http connections (without it, an `oauth` connection never signs in). */
  oauth?: ConnectionOAuth;
  /**
   * Seals and opens a connection's transport at rest (`transport_enc`, migration 0028). The server always
   * passes one; without it (the registry's own unit tests) transports are stored as plain JSON.
   */
  box?: TransportBox;
}

/** AES-GCM with the instance's keys, `aad` naming the value (`connections:<id>:transport`). */
export interface TransportBox {
  seal(aad: string, plaintext: string): string;
  open(aad: string, value: string): string;
}

/** One `notifications/progress` of a call, as the App sent it (message is untrusted text). */
export interface AppProgress {
  progress: number;
  total?: number;
  message?: string;
}

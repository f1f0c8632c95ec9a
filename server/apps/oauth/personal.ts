/**
 * Per-person OAuth connections: for a connection in `person` mode, each person's calls go over an MCP
 * connection of their own that carries their own token (the registry's connection, signed in once by an
 * admin, only lists the tools). Made when the person first calls, dropped when they sign out or the
 * connection is removed. Someone not signed in gets `auth_required` before anything is sent.
 */
import "server-only";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { AppConnection, type ConnectionDeps, type ConnectionRecord } from "../connection";
import { AppCallError } from "../errors";
import type { ConnectionOAuth, OAuthTarget } from "./manager";

export function oauthTarget(record: ConnectionRecord): OAuthTarget | undefined {
  const t = record.transport;
  return t.type === "http" && t.oauth ? { connectionId: record.id, url: t.url, oauth: t.oauth } : undefined;
}

export class PersonalConnections {
  private readonly conns = new Map<string, AppConnection>();

  constructor(
    private readonly oauth: ConnectionOAuth,
    private readonly deps: (authorize: (base: FetchLike) => FetchLike) => ConnectionDeps,
  ) {}

  /** The person's own live connection (connecting it first); `auth_required` when they are not signed in. */
  async connectionFor(record: ConnectionRecord, userId: string): Promise<AppConnection> {
    const target = oauthTarget(record);
    if (!target) throw new AppCallError("unavailable", `${record.name} is not an OAuth App.`);
    const key = `${record.id}\u0000${userId}`;
    let conn = this.conns.get(key);
    if (!conn) {
      if (!(await this.oauth.signedIn(target, userId)))
        throw new AppCallError("auth_required", `Sign in to ${record.name} to use it: Connect it in the chat.`);
      conn = new AppConnection(record, this.deps(this.oauth.authorize(target, userId)));
      this.conns.set(key, conn);
      await conn.start();
    }
    if (conn.status !== "connected" && conn.authRequired) {
      this.conns.delete(key);
      await conn.stop();
      throw new AppCallError("auth_required", `Sign in to ${record.name} again: Connect it in the chat.`);
    }
    return conn;
  }

  /** Drops the live connections of a connection (every person's, or one person's). */
  async drop(connectionId: string, userId?: string): Promise<void> {
    const stopping: Promise<void>[] = [];
    for (const [key, conn] of this.conns) {
      const [id, user] = key.split("\u0000");
      if (id === connectionId && (userId === undefined || user === userId)) {
        this.conns.delete(key);
        stopping.push(conn.stop());
      }
    }
    await Promise.allSettled(stopping);
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.conns.values()].map((c) => c.stop()));
    this.conns.clear();
  }
}

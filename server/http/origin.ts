/**
 * What a request says about where it came from and where it was sent: the server's own origin (the
 * configured public origin, else the Host header and the request's protocol) and the client's address
 * (set by scripts/server.mjs from the socket; a client cannot forge it).
 */
import "server-only";
import type { Env } from "../env";

/** Header scripts/server.mjs sets from the TCP peer address, overwriting anything the client sent. */
export const PEER_HEADER = "x-openbot-peer";

/** The origin browsers use for this server: `OPENBOT_PUBLIC_ORIGIN`, else `<protocol>//<Host header>`. */
export function ownOrigin(req: Request, env: Pick<Env, "OPENBOT_PUBLIC_ORIGIN">): string {
  if (env.OPENBOT_PUBLIC_ORIGIN) return env.OPENBOT_PUBLIC_ORIGIN;
  const url = new URL(req.url);
  const host = req.headers.get("host") ?? url.host;
  return `${url.protocol}//${host}`.toLowerCase();
}

/** True when browsers reach the server over https, so the session cookie gets `Secure`. */
export function servedOverHttps(req: Request, env: Pick<Env, "OPENBOT_PUBLIC_ORIGIN">): boolean {
  return ownOrigin(req, env).startsWith("https:");
}

/** The client's address as the socket saw it (the proxy's, behind a reverse proxy); "unknown" without one. */
export function clientAddress(req: Request): string {
  return req.headers.get(PEER_HEADER) || "unknown";
}

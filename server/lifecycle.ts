/**
 * Start and stop of the server process. The start script (scripts/server.mjs) owns the signals; it
 * calls the hook registered here to close the platform (runs, MCP children, database) before exiting.
 */
import "server-only";
import { closePlatform, getPlatform } from "./boot";

export const SHUTDOWN_HOOK = Symbol.for("openbot.shutdown");

export async function startPlatform(): Promise<void> {
  (globalThis as Record<symbol, unknown>)[SHUTDOWN_HOOK] = closePlatform;
  await getPlatform();
}

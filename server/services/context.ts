/**
 * The one context every service takes first: the platform (database, Apps, keys, events) and who is
 * calling (null: nobody signed in; each service refuses that where it must). The tRPC context and the
 * REST adapter's context both are one.
 */
import "server-only";
import type { Platform } from "../platform";
import type { Principal } from "./auth";

export interface ServiceContext {
  platform: Platform;
  principal: Principal | null;
}

/** The one context every service takes: the platform, and who is asking (null for the server's own work). */
import "server-only";
import type { Platform } from "../platform";
import type { Principal } from "./auth";

export interface ServiceContext {
  platform: Platform;
  principal: Principal | null;
}

/**
 * Who may call what: the one table of the permission(s) each tRPC procedure and each REST route needs
 * (server/api/access.ts enforces it). `public`: no key needed. A key holds exactly the permissions it was
 * created with, cut down to its user's role: a member never holds platform.admin.
 */
import type { Permission } from "./permissions";

export type Access = "public" | readonly Permission[];

const admin = ["platform.admin"] as const;
const read = ["sessions.read"] as const;
const write = ["sessions.write"] as const;
const apps = ["apps.use"] as const;

export const TRPC_ACCESS: Readonly<Record<string, Access>> = {
  "auth.me": "public",
  "auth.signIn": "public",
  "auth.signOut": "public",
  "settings.get": admin,
  "settings.testModel": admin,
  "settings.update": admin,
  "chats.mode": read,
  "chats.list": read,
  "chats.byId": read,
  "chats.create": write,
  "chats.update": write,
  "chats.remove": write,
  "chats.share": write,
  "chats.unshare": write,
  "codeRuns.start": apps,
  "codeRuns.appCall": apps,
  "codeRuns.finish": apps,
  "codeRuns.claim": apps,
  "codeRuns.runOnServer": apps,
  "codeRuns.cancel": apps,
  "codeRuns.byId": apps,
  "codeRuns.listByChat": apps,
  "codeRuns.onChange": apps,
  "codeRuns.onLog": apps,
  "decisions.list": apps,
  "decisions.decide": apps,
  "decisions.decideMany": apps,
  "vault.list": admin,
  "vault.create": admin,
  "vault.rotate": admin,
  "vault.remove": admin,
  "vault.setAccess": admin,
  "appOperations.pendingInputs": apps,
  "appOperations.answer": apps,
  "turns.send": write,
  "turns.stop": write,
  "turns.byId": read,
  "turns.messages": read,
  "turns.onEvent": read,
  "connections.list": apps,
  "connections.create": admin,
  "connections.update": admin,
  "connections.remove": admin,
  "connections.setPolicies": admin,
  "connections.emailOutbox": apps,
  "connections.codeApi": apps,
  "executions.byId": apps,
  "executions.cancel": apps,
  "users.list": admin,
  "users.create": admin,
  "apiKeys.create": admin,
};

/** `METHOD /v1/path` as the route file spells it (`[param]` segments). */
export const REST_ACCESS = {
  "GET /v1/health": "public",
  /** Prometheus scrapes with an admin's API key (`authorization: Bearer obk_…`). */
  "GET /v1/metrics": admin,
  "GET /v1/platform/settings": admin,
  "PATCH /v1/platform/settings": admin,
  "POST /v1/platform/model-test": admin,
  "GET /v1/chats": read,
  "POST /v1/chats": write,
  "GET /v1/chats/[chatId]": read,
  "PATCH /v1/chats/[chatId]": write,
  "DELETE /v1/chats/[chatId]": write,
  "POST /v1/chats/[chatId]/shares": write,
  "DELETE /v1/chats/[chatId]/shares/[userId]": write,
  "GET /v1/chats/[chatId]/messages": read,
  "POST /v1/chats/[chatId]/turns": ["sessions.write", "sessions.read"],
  "GET /v1/turns/[id]": read,
  "POST /v1/turns/[id]/stop": write,
  "GET /v1/chats/[chatId]/code-runs": apps,
  "POST /v1/chats/[chatId]/code-runs": apps,
  "GET /v1/sessions/[sessionId]/code-runs": apps,
  "GET /v1/code-runs/[id]": apps,
  "POST /v1/code-runs/[id]/cancel": apps,
  "GET /v1/executions/[executionId]": apps,
  "POST /v1/executions/[executionId]/cancel": apps,
  "GET /v1/decisions": apps,
  "POST /v1/decisions": apps,
  "POST /v1/decisions/[id]": apps,
  "GET /v1/app-operations": apps,
  "POST /v1/app-operations/[id]/input": apps,
  "GET /v1/code-api": apps,
  "GET /v1/connections": apps,
  "POST /v1/connections": admin,
  "PATCH /v1/connections/[id]": admin,
  "DELETE /v1/connections/[id]": admin,
  "PATCH /v1/connections/[id]/policies": admin,
  // OAuth sign-in: `for: "shared"` needs platform.admin too (checked by the service); `me` is the caller's own.
  "GET /v1/connections/[id]/oauth": apps,
  "POST /v1/connections/[id]/oauth": apps,
  "DELETE /v1/connections/[id]/oauth": apps,
  // The authorization server's redirect back: the signed-in person who started the flow (state) only.
  "GET /v1/oauth/callback": apps,
  "GET /v1/oauth/client-metadata.json": "public",
  "GET /v1/vault": admin,
  "POST /v1/vault": admin,
  "PUT /v1/vault/[...name]": admin,
  "PATCH /v1/vault/[...name]": admin,
  "DELETE /v1/vault/[...name]": admin,
  "GET /v1/users": admin,
  "POST /v1/users": admin,
  "POST /v1/api-keys": admin,
} as const satisfies Record<string, Access>;
export type RestRoute = keyof typeof REST_ACCESS;

/**
 * What an admin sends to add people and manage API keys (tRPC `users.*`, `apiKeys.*`; `/v1/users`,
 * `/v1/api-keys`), and the key view they get back (never the token or its hash).
 */
import { z } from "zod";
import { PERMISSIONS, type Permission } from "./permissions";
import { idField, onlyFields, plainName } from "./text";

export const ROLES = ["admin", "member"] as const;
export type Role = (typeof ROLES)[number];

export const createUserInput = onlyFields(
  {
    name: plainName("name", 100),
    role: z.enum(ROLES, { error: 'role must be "admin" or "member"' }),
  },
  "a person takes name and role",
);
export type CreateUserInput = z.infer<typeof createUserInput>;

/** The person an admin changes or removes: `users.update {id, role}` / `PATCH /v1/users/:id`, `users.remove {id}` / `DELETE /v1/users/:id`. */
export const userIdInput = z.object({ id: idField("id") });
export type UserIdInput = z.infer<typeof userIdInput>;

/** A person's new role; their keys then act with what that role allows (auth.ts cuts them on every request). */
export const updateUserInput = onlyFields(
  {
    id: idField("id"),
    role: z.enum(ROLES, { error: 'role must be "admin" or "member"' }),
  },
  // Only the role changes: a person's name is how records, decisions and grants name them.
  "a person's change takes role only (their name stays as records show it)",
);
export type UpdateUserInput = z.infer<typeof updateUserInput>;

/** One person as admins see them. */
export interface UserView {
  id: string;
  name: string;
  role: Role;
  createdAt: number;
  /** When an admin removed them (their keys revoked, their live runs cancelled); null while they belong. */
  removedAt: number | null;
  /**
   * They hold the working key OPENBOT_ADMIN_TOKEN names on the instance that answered: their role cannot be
   * changed and they cannot be removed until the server is started without that token.
   */
  holdsAdminToken: boolean;
}

/** A key holds exactly these permissions, cut to its user's role (the service refuses more). */
export const createApiKeyInput = onlyFields(
  {
    userId: idField("userId"),
    name: plainName("name", 100),
    permissions: z.array(z.enum(PERMISSIONS, { error: `permissions must be among ${PERMISSIONS.join(", ")}` }), {
      error: "permissions must be a list",
    }),
  },
  "a key takes userId, name and permissions",
);
export type CreateApiKeyInput = z.infer<typeof createApiKeyInput>;

/** The key to revoke: `apiKeys.revoke {id}`, `DELETE /v1/api-keys/:id`. */
export const apiKeyIdInput = z.object({ id: idField("id") });
export type ApiKeyIdInput = z.infer<typeof apiKeyIdInput>;

/** One API key as admins see it: who holds it and what it may do, never its token or hash. */
export interface ApiKeyView {
  id: string;
  name: string;
  userId: string;
  userName: string;
  role: Role;
  /** As created; a key acts with these cut to its user's current role. */
  permissions: Permission[];
  createdAt: number;
  /** When it was revoked; null while it works. */
  revokedAt: number | null;
  /**
   * It is the key OPENBOT_ADMIN_TOKEN names on the instance that answered: it cannot be revoked while the
   * server is started with that token (the next start would add it again).
   */
  fromEnv: boolean;
}

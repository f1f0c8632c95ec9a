/** What an admin sends to add people and API keys (tRPC `users.create`/`apiKeys.create`, `/v1/users`, `/v1/api-keys`). */
import { z } from "zod";
import { PERMISSIONS } from "./permissions";
import { idField, plainName } from "./text";

export const ROLES = ["admin", "member"] as const;
export type Role = (typeof ROLES)[number];

export const createUserInput = z.object({
  name: plainName("name", 100),
  role: z.enum(ROLES, { error: 'role must be "admin" or "member"' }),
});
export type CreateUserInput = z.infer<typeof createUserInput>;

/** A key holds exactly these permissions, cut to its user's role (the service refuses more). */
export const createApiKeyInput = z.object({
  userId: idField("userId"),
  name: plainName("name", 100),
  permissions: z.array(z.enum(PERMISSIONS, { error: `permissions must be among ${PERMISSIONS.join(", ")}` }), {
    error: "permissions must be a list",
  }),
});
export type CreateApiKeyInput = z.infer<typeof createApiKeyInput>;

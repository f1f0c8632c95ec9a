/** Permissions an API key or a signed-in person can hold (SPEC.md "API"). */
export const PERMISSIONS = ["platform.admin", "apps.use", "sessions.read", "sessions.write"] as const;
export type Permission = (typeof PERMISSIONS)[number];
export const ALL_PERMISSIONS: Permission[] = [...PERMISSIONS];

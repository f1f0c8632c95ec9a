/**
 * The server's configuration, read once from the environment and validated by one schema.
 * Every variable the README documents is here, with its default.
 */
import "server-only";
import path from "node:path";
import { z } from "zod";

const schema = z.object({
  /** Folder for the embedded database, keys and app files. Default ./.openbot */
  OPENBOT_DATA_DIR: z.string().min(1).default(".openbot"),
  /** A fixed admin API key; idempotent across restarts. */
  OPENBOT_ADMIN_TOKEN: z.string().min(16, "OPENBOT_ADMIN_TOKEN must be at least 16 characters").optional(),
  /** postgres://… to use Postgres instead of the embedded PGlite. */
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "DATABASE_URL must start with postgres://")
    .optional(),
  /** 32 bytes (64 hex digits or base64); generated into the data dir when unset. */
  OPENBOT_ENCRYPTION_KEY: z.string().optional(),
  /** Earlier keys that still decrypt, comma-separated (set during a key rotation). */
  OPENBOT_OLD_ENCRYPTION_KEYS: z.string().optional(),
  /** Deadline of one App call in ms (100–3600000). Default 30000. */
  OPENBOT_APP_CALL_TIMEOUT_MS: z.coerce
    .number({ error: "OPENBOT_APP_CALL_TIMEOUT_MS must be a number of milliseconds" })
    .int("OPENBOT_APP_CALL_TIMEOUT_MS must be a whole number")
    .min(100, "OPENBOT_APP_CALL_TIMEOUT_MS must be at least 100")
    .max(3_600_000, "OPENBOT_APP_CALL_TIMEOUT_MS must be at most 3600000")
    .default(30_000),
  /** The origin browsers use to reach the server (`https://bot.example.com` behind a reverse proxy). Default: from each request. */
  OPENBOT_PUBLIC_ORIGIN: z
    .string()
    .url("OPENBOT_PUBLIC_ORIGIN must be an origin like https://bot.example.com")
    .refine((v) => {
      const u = new URL(v);
      return /^https?:$/.test(u.protocol) && u.pathname === "/" && !u.search && !u.hash && !u.username;
    }, "OPENBOT_PUBLIC_ORIGIN must be an origin like https://bot.example.com (scheme, host, optional port; no path)")
    .transform((v) => new URL(v).origin)
    .optional(),
  /** Largest request body an authenticated caller may send, in bytes. Default 4 MiB. */
  OPENBOT_MAX_BODY_BYTES: z.coerce
    .number({ error: "OPENBOT_MAX_BODY_BYTES must be a number of bytes" })
    .int("OPENBOT_MAX_BODY_BYTES must be a whole number of bytes")
    .min(16_384, "OPENBOT_MAX_BODY_BYTES must be at least 16384")
    .default(4 * 1024 * 1024),
  /** Runs of one person one sandbox worker thread may host at once (1–16). Default 4. */
  OPENBOT_RUNS_PER_WORKER: z.coerce
    .number({ error: "OPENBOT_RUNS_PER_WORKER must be a number of runs" })
    .int("OPENBOT_RUNS_PER_WORKER must be a whole number")
    .min(1, "OPENBOT_RUNS_PER_WORKER must be at least 1")
    .max(16, "OPENBOT_RUNS_PER_WORKER must be at most 16")
    .default(4),
});

export type Env = z.infer<typeof schema> & { dataDir: string };

export function readEnv(source: Record<string, string | undefined> = process.env): Env {
  const parsed = schema.safeParse({
    OPENBOT_DATA_DIR: source.OPENBOT_DATA_DIR || undefined,
    OPENBOT_ADMIN_TOKEN: source.OPENBOT_ADMIN_TOKEN || undefined,
    DATABASE_URL: source.DATABASE_URL || undefined,
    OPENBOT_ENCRYPTION_KEY: source.OPENBOT_ENCRYPTION_KEY || undefined,
    OPENBOT_OLD_ENCRYPTION_KEYS: source.OPENBOT_OLD_ENCRYPTION_KEYS || undefined,
    OPENBOT_APP_CALL_TIMEOUT_MS: source.OPENBOT_APP_CALL_TIMEOUT_MS || undefined,
    OPENBOT_PUBLIC_ORIGIN: source.OPENBOT_PUBLIC_ORIGIN || undefined,
    OPENBOT_MAX_BODY_BYTES: source.OPENBOT_MAX_BODY_BYTES || undefined,
    OPENBOT_RUNS_PER_WORKER: source.OPENBOT_RUNS_PER_WORKER || undefined,
  });
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new Error(`invalid configuration:\n${lines.join("\n")}`);
  }
  return { ...parsed.data, dataDir: path.resolve(parsed.data.OPENBOT_DATA_DIR) };
}

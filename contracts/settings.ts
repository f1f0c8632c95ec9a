/**
 * Platform settings and their validated ranges (SPEC.md "API"; seed 004's ranges). Shared by the server
 * (validation) and the admin form (the same messages per field).
 */
import { z } from "zod";

export const CODE_MODE_RANGES = {
  timeoutMs: { min: 100, max: 60_000, default: 10_000 },
  memoryMb: { min: 1, max: 1024, default: 64 },
  outputBytes: { min: 1024, max: 10_485_760, default: 65_536 },
  maxPendingCalls: { min: 1, max: 128, default: 16 },
  /** Server-side runs (API runs, re-runs after a decision, takeovers) running at once on this instance. */
  maxServerRuns: { min: 1, max: 64, default: 4 },
  /** Server-side runs one person may have running at once; the rest queue. */
  maxServerRunsPerUser: { min: 1, max: 64, default: 2 },
  /** Server-side runs one person may have queued; beyond it a new run is refused (429). */
  maxQueuedRunsPerUser: { min: 0, max: 1000, default: 16 },
} as const;

const ranged = (name: keyof typeof CODE_MODE_RANGES) => {
  const r = CODE_MODE_RANGES[name];
  return z
    .number({ error: `${name} must be a number` })
    .int(`${name} must be a whole number`)
    .min(r.min, `${name} must be between ${r.min} and ${r.max}`)
    .max(r.max, `${name} must be between ${r.min} and ${r.max}`);
};

export const codeModeSchema = z.object({
  enabled: z.boolean({ error: "enabled must be true or false" }),
  timeoutMs: ranged("timeoutMs"),
  memoryMb: ranged("memoryMb"),
  outputBytes: ranged("outputBytes"),
  maxPendingCalls: ranged("maxPendingCalls"),
  maxServerRuns: ranged("maxServerRuns"),
  maxServerRunsPerUser: ranged("maxServerRunsPerUser"),
  maxQueuedRunsPerUser: ranged("maxQueuedRunsPerUser"),
  /**
   * Traces (OTEL_EXPORTER_OTLP_ENDPOINT set) carry each nested call's arguments, vault secrets redacted.
   * Off: spans say what was called and how it ended, never with what.
   */
  traceArguments: z.boolean({ error: "traceArguments must be true or false" }),
});
export type CodeModeSettings = z.infer<typeof codeModeSchema>;

export const DEFAULT_CODE_MODE: CodeModeSettings = {
  enabled: false,
  timeoutMs: CODE_MODE_RANGES.timeoutMs.default,
  memoryMb: CODE_MODE_RANGES.memoryMb.default,
  outputBytes: CODE_MODE_RANGES.outputBytes.default,
  maxPendingCalls: CODE_MODE_RANGES.maxPendingCalls.default,
  maxServerRuns: CODE_MODE_RANGES.maxServerRuns.default,
  maxServerRunsPerUser: CODE_MODE_RANGES.maxServerRunsPerUser.default,
  maxQueuedRunsPerUser: CODE_MODE_RANGES.maxQueuedRunsPerUser.default,
  traceArguments: false,
};

export const MODEL_PROVIDERS = ["openai-compatible", "openai", "anthropic"] as const;
export type ModelProvider = (typeof MODEL_PROVIDERS)[number];

/** The model as settings show it: the API key is write-only, so only whether one is set. */
export interface ModelSettingsView {
  provider: ModelProvider;
  baseURL?: string;
  model: string;
  apiKeySet: boolean;
}

export const modelPatchSchema = z
  .object({
    provider: z.enum(MODEL_PROVIDERS, { error: `model.provider must be one of ${MODEL_PROVIDERS.join(", ")}` }),
    baseURL: z
      .url({ protocol: /^https?$/, error: "model.baseURL must be an http(s) URL such as http://127.0.0.1:11434/v1" })
      .optional(),
    model: z.string({ error: "model.model is required" }).trim().min(1, "model.model must not be empty").max(200),
    /**
     * Write-only. Omit to keep the stored key (only while the provider and baseURL stay the same: a key
     * is never sent anywhere but where it was entered for); "" removes it.
     */
    apiKey: z.string().max(4000).optional(),
  })
  .strict()
  .refine((m) => m.provider !== "openai-compatible" || !!m.baseURL, {
    message: "baseURL is required for openai-compatible",
    path: ["baseURL"],
  });
export type ModelPatch = z.infer<typeof modelPatchSchema>;

/** Whether two model settings reach the same endpoint: a stored API key is sent only there. */
export const sameModelEndpoint = (
  a: Pick<ModelPatch, "provider" | "baseURL"> | null | undefined,
  b: Pick<ModelPatch, "provider" | "baseURL">,
): boolean => !!a && a.provider === b.provider && (a.baseURL ?? "") === (b.baseURL ?? "");

export interface PlatformSettings {
  version: number;
  codeMode: CodeModeSettings;
  /** null: no model is configured and chats run in manual mode. */
  model: ModelSettingsView | null;
  updatedAt: number;
}

export const settingsPatchSchema = z
  .object({
    expectedVersion: z
      .number({ error: "expectedVersion must be a number" })
      .int("expectedVersion must be a whole number"),
    codeMode: codeModeSchema.partial().strict().optional(),
    model: modelPatchSchema.nullable().optional(),
  })
  .strict();
export type SettingsPatch = z.infer<typeof settingsPatchSchema>;

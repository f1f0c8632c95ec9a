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
});
export type CodeModeSettings = z.infer<typeof codeModeSchema>;

export const DEFAULT_CODE_MODE: CodeModeSettings = {
  enabled: false,
  timeoutMs: CODE_MODE_RANGES.timeoutMs.default,
  memoryMb: CODE_MODE_RANGES.memoryMb.default,
  outputBytes: CODE_MODE_RANGES.outputBytes.default,
  maxPendingCalls: CODE_MODE_RANGES.maxPendingCalls.default,
};

export interface PlatformSettings {
  version: number;
  codeMode: CodeModeSettings;
  updatedAt: number;
}

export const settingsPatchSchema = z
  .object({
    expectedVersion: z.number({ error: "expectedVersion must be a number" }).int("expectedVersion must be a whole number"),
    codeMode: codeModeSchema.partial().strict().optional(),
  })
  .strict();
export type SettingsPatch = z.infer<typeof settingsPatchSchema>;

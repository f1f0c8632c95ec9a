/**
 * The configured model, through the Vercel AI SDK providers: any OpenAI-compatible endpoint (Ollama,
 * vLLM, llama.cpp server, most hosted APIs), OpenAI, or Anthropic. Tests swap in the SDK's mock models
 * through `platform.modelOverride`.
 */
import "server-only";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, type LanguageModel } from "ai";
import { type ModelPatch, type ModelSettingsView, sameModelEndpoint } from "@/contracts/settings";
import type { Platform } from "../../platform";
import { requirePermission } from "../auth";
import type { ServiceContext } from "../context";
import { readModelApiKey, readSettings } from "../settings";

export function makeModel(settings: Omit<ModelSettingsView, "apiKeySet">, apiKey: string | undefined): LanguageModel {
  switch (settings.provider) {
    case "openai-compatible":
      return createOpenAICompatible({ name: "openai-compatible", baseURL: settings.baseURL ?? "", apiKey }).chatModel(
        settings.model,
      );
    case "openai":
      return createOpenAI({ apiKey, baseURL: settings.baseURL }).chat(settings.model);
    case "anthropic":
      return createAnthropic({ apiKey, baseURL: settings.baseURL })(settings.model);
  }
}

/** The model for a turn, or null when none is configured (manual mode). */
export async function resolveModel(platform: Platform): Promise<LanguageModel | null> {
  if (platform.modelOverride) return platform.modelOverride;
  const settings = await readSettings(platform.db);
  if (!settings.model) return null;
  return makeModel(settings.model, await readModelApiKey(platform.db, platform.open));
}

/**
 * "Test connection": one tiny request, to the model in `input` (the form as it is, saved or not) or else
 * the saved one. The stored API key is used only for the saved provider and base URL, so a typed URL
 * never receives it. An answer with no text is a warning, not a success.
 */
export async function testModelConnection(
  { platform, principal }: ServiceContext,
  input?: ModelPatch,
): Promise<{ ok: boolean; warning?: boolean; message: string }> {
  requirePermission(principal, "platform.admin");
  let model: LanguageModel | null;
  if (input === undefined) model = await resolveModel(platform);
  else {
    const saved = (await readSettings(platform.db)).model;
    const apiKey =
      input.apiKey ?? (sameModelEndpoint(saved, input) ? await readModelApiKey(platform.db, platform.open) : undefined);
    model = makeModel(input, apiKey);
  }
  if (!model) return { ok: false, message: "No model is configured." };
  try {
    const result = await generateText({
      model,
      prompt: "Reply with the single word OK.",
      maxOutputTokens: 16,
      maxRetries: 0,
      timeout: 20_000,
    });
    if (!result.text.trim()) {
      return {
        ok: false,
        warning: true,
        message:
          "The endpoint answered, but with no text: check the model name, or whether the model needs more output tokens.",
      };
    }
    return { ok: true, message: `The model answered: ${JSON.stringify(result.text.slice(0, 200))}` };
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    return { ok: false, message: `The endpoint did not answer as expected: ${text.slice(0, 400)}` };
  }
}

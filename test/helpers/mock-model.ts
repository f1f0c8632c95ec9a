/**
 * A scripted model on the AI SDK's MockLanguageModelV3: each step looks at what the model was sent and
 * answers with a tool call or text, deterministically.
 */
import type { LanguageModelV3CallOptions, LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { simulateReadableStream } from "ai";
import { MockLanguageModelV3 } from "ai/test";

export type Step = { toolCall: { name: string; input: unknown } } | { text: string };
export type Script = (call: LanguageModelV3CallOptions, n: number) => Step;

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

export function scriptedModel(script: Script, options: { chunkDelayInMs?: number } = {}) {
  let n = 0;
  const model = new MockLanguageModelV3({
    doStream: async (call) => {
      const step = script(call, n++);
      const chunks: LanguageModelV3StreamPart[] = [{ type: "stream-start", warnings: [] }];
      if ("toolCall" in step) {
        chunks.push({
          type: "tool-call",
          toolCallId: `call_${n}`,
          toolName: step.toolCall.name,
          input: JSON.stringify(step.toolCall.input),
        });
        chunks.push({ type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage });
      } else {
        chunks.push({ type: "text-start", id: "t" });
        for (const word of step.text.split(/(?<= )/)) chunks.push({ type: "text-delta", id: "t", delta: word });
        chunks.push({ type: "text-end", id: "t" });
        chunks.push({ type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage });
      }
      return { stream: simulateReadableStream({ chunks, chunkDelayInMs: options.chunkDelayInMs ?? 0 }) };
    },
  });
  return model;
}

/** The last tool result the model was sent, parsed (undefined before any). */
export function lastToolResult(call: LanguageModelV3CallOptions): unknown {
  for (const message of [...call.prompt].reverse()) {
    if (message.role !== "tool") continue;
    for (const part of [...message.content].reverse()) {
      if (part.type === "tool-result") {
        const output = part.output as { type: string; value: unknown };
        return output.type === "json"
          ? output.value
          : output.type === "text"
            ? JSON.parse(String(output.value))
            : output.value;
      }
    }
  }
  return undefined;
}

export const lastIsTool = (call: LanguageModelV3CallOptions) => call.prompt.at(-1)?.role === "tool";

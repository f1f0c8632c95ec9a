/**
 * Results that arrive after their turn moved on (a run or a direct call that waited for a decision):
 * posted into the chat, and with a model the conversation continues. The agent subscribes to the
 * platform's domain events for them, so no lower layer calls up into it.
 */
import "server-only";
import type { Platform } from "../../platform";
import { principalFromKeyId } from "../auth";
import { readRecordInternal } from "../code-runs/records";
import { createTurn, runLoop } from "./loop";
import { appendMessages } from "./messages";
import { resolveModel } from "./models";
import { runToolResult } from "./tools";
import { emitTurnEvent } from "./turn-feed";

/**
 * A result that arrives after its turn moved on (a run or call that waited for a decision): posted into
 * the chat, and if a model is configured the conversation continues with it.
 */
export async function postLateResult(
  platform: Platform,
  chatId: string,
  keyId: string | null,
  summary: string,
  payload: unknown,
): Promise<void> {
  const text = `${summary}\n${JSON.stringify(payload).slice(0, 20_000)}`;
  await appendMessages(platform, chatId, null, [{ role: "user", content: `[OpenBot] ${text}` }], "notice");
  emitTurnEvent(platform, chatId, { type: "turn-end", turnId: "", status: "Completed" });
  const principal = keyId ? await principalFromKeyId(platform.db, keyId) : null;
  const model = await resolveModel(platform);
  if (!principal || !model) return;
  const turnId = await createTurn(platform, principal, chatId, "server");
  await runLoop(platform, principal, chatId, turnId, model, "server");
}

/**
 * Called when a run ends: if its turn only got "waiting" (`turn_waiting`, whatever the run waited for: a
 * decision, App input, an MCP task, an Unknown call), the result goes into the chat now. `reported` is
 * claimed in the same statement, so the turn's own tool result and this never both carry it.
 */
export async function reportRunIfLate(platform: Platform, runId: string): Promise<void> {
  const rows = await platform.db.query<{ chat_id: string; api_key_id: string | null; turn_id: string | null }>(
    `update code_runs set reported = true where id = $1 and reported = false and turn_id is not null
     and turn_waiting and status in ('Completed', 'Failed', 'Cancelled')
     returning chat_id, api_key_id, turn_id`,
    [runId],
  );
  const row = rows[0];
  if (!row) return;
  const record = await readRecordInternal(platform, runId);
  const payload = record ? runToolResult(record) : { runId };
  await postLateResult(platform, row.chat_id, row.api_key_id, `The code run ${runId} finished.`, payload);
}

/** Wires the agent to the platform's domain events (the composition root does this once per platform). */
export function subscribeAgent(platform: Platform): void {
  platform.events.on("direct-call-settled", ({ chatId, keyId, summary, payload }) =>
    platform.track(postLateResult(platform, chatId, keyId, summary, payload)),
  );
}

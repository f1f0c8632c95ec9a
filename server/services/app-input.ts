/**
 * A program's App call that asks for input, parked durably (2026-07-28 `input_required`): what is stored
 * with its App operation (the card's question; the App's requests and `requestState`, sealed to the row
 * and column), the person's answer (sealed) until the retry is claimed, and the retry's `inputResponses`
 * built from them. Nothing waits in memory: any instance, after any restart, sends the retry.
 *
 * Statuses of such an operation: `InputRequired` (waiting for the person) → `InputAnswered` (the answer
 * is stored, the run is re-run) → `Running` (the re-run claimed the retry in one statement before sending
 * it: a crash after that is the ordinary Unknown path, never a second send) → `Completed` / `Failed`.
 */
import "server-only";
import type { InputAnswer, RetryParams } from "../apps/registry";
import type { Platform } from "../platform";

/** How long a parked question waits for its person before the program's call fails with AppInputRequired. */
export const INPUT_DEADLINE_MS = 24 * 60 * 60_000;
/** Rounds of `input_required` one call may take before it is given up. */
export const MAX_INPUT_ROUNDS = 8;

/** What the card shows (redacted, untrusted text from the App). */
export interface InputQuestion {
  binding: string;
  message: string;
  mode: "form" | "url";
  /** Form mode: the JSON Schema of the answer. URL mode: `{}`. */
  requestedSchema: Record<string, unknown>;
  /** URL mode: the page the person opens (never the model). */
  url?: string;
}

/** What the retry needs besides the answer: which requests were asked, and the server's state unchanged. */
export interface ParkedState {
  requests: { key: string; method: string }[];
  requestState?: string;
  round: number;
}

/**
 * The card and the state of an `input_required` result, or why OpenBot cannot answer it (sampling, more
 * than one question at once, a malformed elicitation): then the call fails as a tool error.
 */
export function parkable(
  asked: { inputRequests: Record<string, { method: string; params?: unknown }>; requestState?: string },
  binding: string,
  round: number,
): { question: InputQuestion; state: ParkedState } | { problem: string } {
  if (round >= MAX_INPUT_ROUNDS) return { problem: `${binding} kept asking for input (${round} rounds).` };
  const entries = Object.entries(asked.inputRequests);
  const elicitations = entries.filter(([, r]) => r.method === "elicitation/create");
  const other = entries.find(([, r]) => r.method !== "elicitation/create" && r.method !== "roots/list");
  if (other) return { problem: `${binding} asked for ${other[1].method.slice(0, 60)}, which OpenBot does not offer.` };
  if (elicitations.length !== 1)
    return { problem: `${binding} asked ${elicitations.length} questions at once; OpenBot answers one at a time.` };
  const params = (elicitations[0]![1].params ?? {}) as {
    mode?: unknown;
    message?: unknown;
    requestedSchema?: unknown;
    url?: unknown;
  };
  const message = String(params.message ?? "").slice(0, 4000);
  let question: InputQuestion;
  if (params.mode === "url") {
    if (typeof params.url !== "string" || !/^https?:\/\//i.test(params.url))
      return { problem: `${binding} asked the person to open a link that is not an http(s) URL.` };
    question = { binding, message, mode: "url", requestedSchema: {}, url: params.url.slice(0, 4000) };
  } else {
    const schema = params.requestedSchema;
    if (typeof schema !== "object" || schema === null || Array.isArray(schema))
      return { problem: `${binding} asked a question without a requested schema.` };
    question = { binding, message, mode: "form", requestedSchema: schema as Record<string, unknown> };
  }
  const state: ParkedState = {
    requests: entries.map(([key, r]) => ({ key, method: r.method })),
    ...(asked.requestState !== undefined ? { requestState: asked.requestState } : {}),
    round,
  };
  return { question, state };
}

/** Stores the parked question with its operation (status InputRequired) and its deadline. */
export async function parkOperation(
  platform: Platform,
  operationId: string,
  parked: { question: InputQuestion; state: ParkedState },
  now = Date.now(),
): Promise<void> {
  const seal = (field: string, value: unknown) =>
    platform.seal(`app_operations:${operationId}:${field}`, JSON.stringify(value));
  await platform.db.query(
    `update app_operations set status = 'InputRequired', input_id = null, input_enc = $1, input_state_enc = $2,
       input_answer_enc = null, input_expires_at = $3 where id = $4`,
    [seal("input", parked.question), seal("input_state", parked.state), now + INPUT_DEADLINE_MS, operationId],
  );
}

/** Stores an accepted answer (InputRequired → InputAnswered). False when the question was no longer open. */
export async function storeAnswer(platform: Platform, operationId: string, answer: InputAnswer): Promise<boolean> {
  const sealed = platform.seal(`app_operations:${operationId}:input_answer`, JSON.stringify(answer));
  const rows = await platform.db.query(
    `update app_operations set status = 'InputAnswered', input_answer_enc = $1
     where id = $2 and status = 'InputRequired' and input_state_enc is not null returning id`,
    [sealed, operationId],
  );
  return rows.length > 0;
}

/**
 * Claims an answered operation's retry (InputAnswered → Running, in the one statement that reads it):
 * only one claimer ever gets it. Null when nothing was there to claim.
 */
export async function claimRetry(
  platform: Platform,
  operationId: string,
): Promise<{ retry: RetryParams; round: number } | null> {
  const rows = await platform.db.query<{ input_state_enc: string; input_answer_enc: string }>(
    `update app_operations set status = 'Running', started_at = $2
     where id = $1 and status = 'InputAnswered' returning input_state_enc, input_answer_enc`,
    [operationId, Date.now()],
  );
  const row = rows[0];
  if (!row) return null;
  const open = <T>(field: string, value: string) =>
    JSON.parse(platform.open(`app_operations:${operationId}:${field}`, value)) as T;
  const state = open<ParkedState>("input_state", row.input_state_enc);
  const answer = open<InputAnswer>("input_answer", row.input_answer_enc);
  const inputResponses: Record<string, unknown> = {};
  for (const { key, method } of state.requests) inputResponses[key] = method === "roots/list" ? { roots: [] } : answer;
  return {
    retry: { inputResponses, ...(state.requestState !== undefined ? { requestState: state.requestState } : {}) },
    round: state.round + 1,
  };
}

/**
 * A run's life: start, the ticket a host runs an attempt from, claims, the server runner (with admission),
 * re-runs after a decision, cancel. The server is the source of truth for the run's time, seed, limits,
 * bindings and replay log, so any host (the page's worker or the server runner) behaves the same.
 */
import "server-only";
import { randomInt, randomUUID } from "node:crypto";
import { type CodeRunRecord, isLiveRunStatus, type RunTicket, startRunInput } from "@/contracts/code-run";
import type { EngineLimits, HostCallAnswer } from "@/contracts/engine";
import type { PlatformSettings } from "@/contracts/settings";
import { logEvent, logFailure } from "../../log";
import type { Platform } from "../../platform";
import type { RunPass } from "../../run-admission";
import { emitTurnEvent } from "../agent/turn-feed";
import { principalFromKeyId, requirePermission } from "../auth";
import { ownedChat, ownsChat } from "../chats";
import type { ServiceContext } from "../context";
import { AppError, invalidInput, isAppError } from "../errors";
import { traceAttempt } from "../run-trace";
import { readSettings } from "../settings";
import { transpileTypeScript } from "../transpile";
import { vaultNames } from "../vault";
import { handleCall } from "./calls";
import { failRun, finishRun } from "./endings";
import { replayLog } from "./journal";
import { getRun } from "./records";
import { loadRun, open, type RunRow, runForCall, runForHost, seal, seedHostCheck } from "./rows";

/**
 * A chat title for a program a person ran: the bindings of the run's catalog it names, in order (up to
 * three), or null when it names none. Only catalog names, never the program's own text or its reason:
 * code and reason are encrypted at rest, and a title is stored (and searched) in clear.
 */
/**
 * The program with its comments and the text of its string and template literals blanked out, so that
 * `// apps.email.send_email is not called` or `"apps.email.send_email"` names nothing. A plain scanner,
 * not a parser: a regular expression literal holding a quote may blank a little more, never less.
 */
function codeOnly(code: string): string {
  let out = "";
  let i = 0;
  while (i < code.length) {
    const c = code[i]!;
    const next = code[i + 1];
    let stop: number;
    if (c === "/" && next === "/") {
      const newline = code.indexOf("\n", i);
      stop = newline === -1 ? code.length : newline;
    } else if (c === "/" && next === "*") {
      const close = code.indexOf("*/", i + 2);
      stop = close === -1 ? code.length : close + 2;
    } else if (c === '"' || c === "'" || c === "`") {
      let j = i + 1;
      while (j < code.length && code[j] !== c && (c === "`" || code[j] !== "\n")) j += code[j] === "\\" ? 2 : 1;
      stop = Math.min(j + 1, code.length);
    } else {
      out += c;
      i += 1;
      continue;
    }
    out += " ".repeat(stop - i);
    i = stop;
  }
  return out;
}

export function titleFromProgram(code: string, catalog: readonly string[]): string | null {
  const known = new Set(catalog);
  const named = new Set<string>();
  for (const m of codeOnly(code).matchAll(/\bapps\s*\.\s*([A-Za-z_$][\w$]*)\s*\.\s*([A-Za-z_$][\w$]*)/g)) {
    const binding = `${m[1]}.${m[2]}`;
    if (known.has(binding)) named.add(binding);
  }
  if (named.size === 0) return null;
  const title = [...named].slice(0, 3).join(", ") + (named.size > 3 ? ", …" : "");
  return title.length > 80 ? `${title.slice(0, 79)}…` : title;
}

/** A person's claim of an `Idempotency-Key` (stored as its hash). */
export type IdempotencyClaim = { userId: string; keyHash: string };

/** Creates a run and hands back what a host needs to run its first attempt. */
export async function startRun(
  ctx: ServiceContext,
  input: unknown,
  host: "browser" | "server",
  links: { turnId?: string; callId?: string; onCreated?: (runId: string) => void } = {},
): Promise<{ ticket: RunTicket | null; record: CodeRunRecord }> {
  const { runId, ticket } = await createRun(ctx, input, host, links);
  return { ticket, record: await getRun(ctx, runId) };
}

/**
 * The row a ticket's run was written with by this process (createRun) and when its caller's right to run
 * it was checked: runTicketOnServer seeds the first call's host check from it (rows.ts seedHostCheck).
 */
const writtenRows = new WeakMap<RunTicket, { row: RunRow; checkedAt: number }>();

/**
 * Writes the run (and touches its chat) in one statement; its first attempt's ticket is made from what was
 * just written (a new run has no replay log). `settings`: read by the caller for this same request;
 * `queued`: the server runner's pass for it is not immediate, so it is written Queued (runTicketOnServer).
 */
async function createRun(
  ctx: ServiceContext,
  input: unknown,
  host: "browser" | "server",
  links: {
    turnId?: string;
    callId?: string;
    onCreated?: (runId: string) => void;
    settings?: PlatformSettings;
    queued?: boolean;
    /** An `Idempotency-Key` claim (idempotency.ts) linked to the run by the statement that writes it. */
    idempotencyKey?: IdempotencyClaim;
  },
): Promise<{ runId: string; ticket: RunTicket | null }> {
  const p = requirePermission(ctx.principal, "apps.use");
  const parsed = startRunInput.safeParse(input);
  if (!parsed.success) throw invalidInput(parsed.error.issues);
  const { chatId, code, reason, language } = parsed.data;
  const { db } = ctx.platform;
  const checkedAt = Date.now();
  await ownedChat(db, p, chatId);
  const settings = links.settings ?? (await readSettings(db));
  const limits: EngineLimits = {
    timeoutMs: settings.codeMode.timeoutMs,
    memoryMb: settings.codeMode.memoryMb,
    outputBytes: settings.codeMode.outputBytes,
    maxPendingCalls: settings.codeMode.maxPendingCalls,
  };
  const bindings = ctx.platform.apps.catalog().map((t) => t.binding);
  const id = `run_${randomUUID()}`;
  const now = Date.now();
  const time = now;
  const seed = randomInt(1, 2 ** 31 - 1);
  const written: RunRow = {
    id,
    execution_id: `exe_${randomUUID()}`,
    chat_id: chatId,
    turn_id: links.turnId ?? null,
    call_id: links.callId ?? null,
    created_by: p.userId,
    api_key_id: p.keyId,
    status: links.queued ? "Queued" : "Running",
    language,
    code_enc: seal(ctx, "code_runs", id, "code", code),
    reason_enc: seal(ctx, "code_runs", id, "reason", reason),
    run_time: time,
    seed,
    limits: JSON.stringify(limits),
    bindings: JSON.stringify(bindings),
    vault_names: JSON.stringify(await vaultNames(ctx.platform, p)),
    attempt: 1,
    host,
    result_enc: null,
    failure_reason: null,
    error_id: null,
    created_at: now,
    updated_at: now,
  };
  // The key's claim is linked in the same statement, so no crash can leave a run whose key still says
  // "starting" (a retry would wait for a link that never comes).
  const claim = links.idempotencyKey;
  const linkKey = claim
    ? ", claim as (update idempotency_keys set run_id = $1 where user_id = $23 and key_hash = $24 and run_id is null)"
    : "";
  // A run of a person's own (manual mode, the API) titles a chat still called "New chat"; a turn's run
  // leaves that to the turn, which titles the chat from the person's message. A run refused at once because
  // Code Mode is off names nothing: the chat keeps its title.
  const title = links.turnId || !settings.codeMode.enabled ? null : titleFromProgram(code, bindings);
  const touched = await db.query<{ title: string }>(
    `with run as (
       insert into code_runs (id, execution_id, chat_id, created_by, api_key_id, status, language, code_enc, reason_enc,
         run_time, seed, limits, bindings, host, created_at, updated_at, turn_id, call_id, claimed_at, vault_names, host_instance,
         attempt)
       values ($1, $2, $3, $4, $14, $21, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13, $15, $16, $17, $18, $19, $20)
       returning chat_id)${linkKey}
     update chats set updated_at = $13,
       title = case when $22::text is not null and title = 'New chat' then $22::text else title end
     where id = (select chat_id from run) returning title`,
    [
      id,
      written.execution_id,
      chatId,
      p.userId,
      language,
      written.code_enc,
      written.reason_enc,
      time,
      seed,
      written.limits,
      written.bindings,
      host,
      now,
      p.keyId,
      written.turn_id,
      written.call_id,
      links.turnId ? null : now,
      written.vault_names,
      ctx.platform.instanceId,
      written.attempt,
      written.status,
      title,
      ...(claim ? [claim.userId, claim.keyHash] : []),
    ],
  );
  links.onCreated?.(id);
  ctx.platform.events.emit("run", { runId: id, chatId });
  if (title !== null && touched[0]?.title === title)
    emitTurnEvent(ctx.platform, chatId, { type: "chat-title", turnId: "", title });
  if (!settings.codeMode.enabled) {
    await failRun(ctx, id, "Unavailable", "Code Mode is off: an admin can turn it on in Admin → Settings.", []);
    return { runId: id, ticket: null };
  }
  const ticket = await ticketFrom(ctx, written, code, async () => ({ log: undefined, next: 0 }));
  if (ticket) writtenRows.set(ticket, { row: written, checkedAt });
  return { runId: id, ticket };
}

/** What a host needs to run the run's current attempt; null when the program cannot even start (the run is failed). */
function ticketFor(ctx: ServiceContext, run: RunRow): Promise<RunTicket | null> {
  return ticketFrom(ctx, run, open<string>(ctx, "code_runs", run.id, "code", run.code_enc), () =>
    replayLog(ctx, run.id),
  );
}

type TicketSource = Pick<
  RunRow,
  "id" | "attempt" | "language" | "run_time" | "seed" | "limits" | "bindings" | "vault_names"
>;

/**
 * The first index of a ticket's attempt that the record had nothing at or after when the ticket was made
 * (journal `replayLog`): this instance's server runner sends read-only calls from there on before writing
 * (reads.ts). A ticket without one (a page's, or made elsewhere) takes the ordinary path for every call.
 */
const firstNewOf = new WeakMap<RunTicket, number>();

async function ticketFrom(
  ctx: ServiceContext,
  run: TicketSource,
  source: string,
  replay: () => Promise<{ log: RunTicket["input"]["replay"]; next: number }>,
): Promise<RunTicket | null> {
  let js = source;
  if (run.language === "typescript") {
    const out = await transpileTypeScript(js);
    if (!out.ok) {
      await failRun(ctx, run.id, "Error", out.message, []);
      return null;
    }
    js = out.code;
  }
  const recorded = await replay();
  const ticket: RunTicket = {
    runId: run.id,
    attempt: run.attempt,
    input: {
      code: js,
      time: Number(run.run_time),
      seed: Number(run.seed),
      limits: JSON.parse(run.limits) as EngineLimits,
      bindings: JSON.parse(run.bindings) as string[],
      vaultNames: run.vault_names
        ? (JSON.parse(run.vault_names) as string[])
        : ctx.principal
          ? await vaultNames(ctx.platform, ctx.principal)
          : [],
      replay: recorded.log,
    },
  };
  firstNewOf.set(ticket, recorded.next);
  return ticket;
}

/**
 * Runs the program again from the top on the server runner, once no decision of the run is pending and
 * none of its calls waits for a person's input.
 * It acts as the API key that started the run; if that key is gone the run ends as Interrupted.
 */
export async function resumeRun(
  platform: Platform,
  runId: string,
  from: { status: "Waiting" } | { status: "Running"; attempt: number } = { status: "Waiting" },
): Promise<void> {
  const { db } = platform;
  // Not while a decision is pending, a person's input is awaited, or a task is still out at its App
  // (its poll job, tasks.ts, runs the program again when it finishes).
  const pending = await db.query(
    `select 1 from decisions where run_id = $1 and status = 'pending'
     union all select 1 from app_operations where run_id = $1 and status in ('InputRequired', 'Task')`,
    [runId],
  );
  if (pending.length) return;
  const owner = (
    await db.query<{ api_key_id: string | null }>("select api_key_id from code_runs where id = $1", [runId])
  )[0];
  const principal = owner?.api_key_id ? await principalFromKeyId(db, owner.api_key_id) : null;
  const ctx: ServiceContext = { platform, principal };
  if (!principal) {
    await failRun(ctx, runId, "Interrupted", "The run's caller is gone, so it was not run again.", []);
    return;
  }
  const rows =
    from.status === "Waiting"
      ? await db.query<RunRow>(
          `update code_runs set attempt = attempt + 1, status = 'Running', host = 'server', claimed_at = $2, updated_at = $2,
             host_instance = $3
           where id = $1 and status = 'Waiting' returning *`,
          [runId, Date.now(), platform.instanceId],
        )
      : await db.query<RunRow>(
          `update code_runs set attempt = attempt + 1, status = 'Running', host = 'server', claimed_at = $2, updated_at = $2,
             host_instance = $4
           where id = $1 and status in ('Running', 'Queued') and attempt = $3 returning *`,
          [runId, Date.now(), from.attempt, platform.instanceId],
        );
  if (!rows[0]) return;
  platform.events.emit("run", { runId, chatId: rows[0].chat_id });
  const ticket = await ticketFor(ctx, rows[0]);
  if (ticket) await runTicketOnServer(ctx, ticket);
}

/**
 * A host takes an attempt: only one (a page's worker, or the server when no page does) runs it.
 * Returns false when another host already claimed it.
 */
export async function claimRun(platform: Platform, runId: string, attempt: number): Promise<boolean> {
  const rows = await platform.db.query(
    "update code_runs set claimed_at = $3, updated_at = $3 where id = $1 and attempt = $2 and claimed_at is null and status = 'Running' returning id",
    [runId, attempt, Date.now()],
  );
  return rows.length > 0;
}

/**
 * The page hosting this attempt is still there (the caller passes the host check its calls pass): its
 * lease is renewed (sweep.ts). False when the run is no longer Running at that attempt on a page.
 */
export async function renewPageHost(ctx: ServiceContext, runId: string, attempt: number): Promise<{ alive: boolean }> {
  await runForCall(ctx, runId, attempt);
  const rows = await ctx.platform.db.query(
    `update code_runs set updated_at = $3 where id = $1 and attempt = $2 and status = 'Running' and host <> 'server'
     returning id`,
    [runId, attempt, Date.now()],
  );
  return { alive: rows.length > 0 };
}

/** A page claims a turn's program to run it in its worker; null when another host already has it. */
export async function claimForPage(ctx: ServiceContext, runId: string, attempt: number): Promise<RunTicket | null> {
  const { run } = await runForHost(ctx, runId, attempt);
  if (!(await claimRun(ctx.platform, runId, attempt))) return null;
  ctx.platform.events.emit("run", { runId, chatId: run.chat_id });
  return ticketFor(ctx, { ...run, claimed_at: Date.now() } as RunRow);
}

/**
 * Runs a program on the server's runner (no browser) and answers with its record. The runner's slot is
 * asked for before the run is created, so a refusal (the person's queue is full) leaves no run behind.
 */
export async function runOnServer(
  ctx: ServiceContext,
  input: unknown,
  /** `onCreated`: the run's row exists (called before anything else can fail); `idempotencyKey`: see createRun. */
  options: { onCreated?: (runId: string) => void; idempotencyKey?: IdempotencyClaim } = {},
): Promise<CodeRunRecord> {
  const p = requirePermission(ctx.principal, "apps.use");
  const settings = await readSettings(ctx.platform.db);
  const pass = admit(ctx.platform, p.userId, settings.codeMode, true);
  let handedOver = false;
  try {
    const { runId, ticket } = await createRun(ctx, input, "server", {
      onCreated: options.onCreated,
      settings,
      queued: !pass.immediate,
      idempotencyKey: options.idempotencyKey,
    });
    if (!ticket) return await getRun(ctx, runId);
    handedOver = true;
    return await runTicketOnServer(ctx, ticket, pass);
  } finally {
    if (!handedOver) pass.release();
  }
}

/**
 * A slot in the server runner under the current settings (run-admission.ts). With `bounded`, a full
 * queue is TOO_MANY_REQUESTS (429), made here from the admission's data.
 */
async function requestPass(platform: Platform, userId: string, bounded: boolean): Promise<RunPass> {
  const { codeMode } = await readSettings(platform.db);
  return admit(platform, userId, codeMode, bounded);
}

function admit(platform: Platform, userId: string, codeMode: PlatformSettings["codeMode"], bounded: boolean): RunPass {
  const answer = platform.admission.request(userId, codeMode, { bounded });
  if (answer.refused) throw new AppError("TOO_MANY_REQUESTS", answer.message, answer.details);
  return answer;
}

/**
 * Runs one attempt on the server runner once admission lets it: until then the run is `Queued`. Every
 * server-side start passes here (API runs, turns without a page, re-runs after a decision, takeovers).
 * `admission`: a pass already taken (runOnServer: the run was written Queued unless it was immediate);
 * "bounded" (a person's request: a full queue fails the run with the refusal's message); "queue"
 * (background work the server owes: always queues). A run this process just wrote (createRun) starts with
 * its first call's host check seeded from what the start read and wrote (rows.ts seedHostCheck).
 */
export async function runTicketOnServer(
  ctx: ServiceContext,
  ticket: RunTicket,
  admission: RunPass | "bounded" | "queue" = "queue",
): Promise<CodeRunRecord> {
  const controller = new AbortController();
  ctx.platform.activeRuns.set(ticket.runId, controller);
  let held: RunPass | undefined = typeof admission === "object" ? admission : undefined;
  const leaveQueue = () => held?.release();
  controller.signal.addEventListener("abort", leaveQueue, { once: true });
  try {
    if (!held) {
      try {
        held = await requestPass(ctx.platform, ctx.principal?.userId ?? "", admission === "bounded");
      } catch (error) {
        if ((error as { code?: unknown }).code !== "TOO_MANY_REQUESTS") throw error;
        await failRun(ctx, ticket.runId, "Unavailable", (error as Error).message, []);
        return await getRun(ctx, ticket.runId);
      }
    }
    const written = writtenRows.get(ticket);
    if (!held.immediate) {
      const { db, events } = ctx.platform;
      if (written?.row.status !== "Queued") {
        await db.query("update code_runs set status = 'Queued' where id = $1 and status = 'Running' and attempt = $2", [
          ticket.runId,
          ticket.attempt,
        ]);
        events.emit("run", { runId: ticket.runId });
      }
      if (controller.signal.aborted || !(await held.admitted)) return await getRun(ctx, ticket.runId);
      // Still this attempt and still queued (not cancelled, not taken over by another instance); the
      // chat's owner as it is now, for the first call's host check.
      const checkedAt = Date.now();
      const rows = await db.query<{ owner_id: string | null }>(
        `update code_runs set status = 'Running', updated_at = $2 where id = $1 and status = 'Queued' and attempt = $3
         returning (select owner_id from chats where chats.id = code_runs.chat_id) as owner_id`,
        [ticket.runId, checkedAt, ticket.attempt],
      );
      if (!rows.length) return await getRun(ctx, ticket.runId);
      events.emit("run", { runId: ticket.runId });
      if (written && ctx.principal && ownsChat(ctx.principal, rows[0]?.owner_id ?? null))
        seedHostCheck(ctx, { ...written.row, status: "Running" }, checkedAt);
    } else if (written) seedHostCheck(ctx, written.row, written.checkedAt);
    controller.signal.removeEventListener("abort", leaveQueue);
    const outcome = await traceAttempt(ctx.platform, ticket, () =>
      ctx.platform.runner.run(ticket.input, {
        call: (req) =>
          handleCall(ctx, ticket.runId, ticket.attempt, req, firstNewOf.get(ticket)).catch(
            (error: unknown): HostCallAnswer => {
              logFailure("code_run_call_failed", error, { runId: ticket.runId, index: req.index });
              return { type: "stop", reason: "Unavailable", message: "OpenBot could not store this call." };
            },
          ),
        onLog: (line) => ctx.platform.events.emit("run-log", { runId: ticket.runId, line }),
        signal: controller.signal,
        tenant: ctx.principal?.userId,
      }),
    );
    // This instance is shutting down: the run stays Running for another instance (or the next start)
    // to take over through replay once this one's lease has ended.
    if (controller.signal.aborted && ctx.platform.closing) return await getRun(ctx, ticket.runId);
    try {
      return await finishRun(ctx, ticket.runId, ticket.attempt, outcome);
    } catch (error) {
      // The runner's own report out of bounds is a bug, but the run must still end.
      if ((error as { code?: unknown }).code !== "BAD_REQUEST") throw error;
      await failRun(
        ctx,
        ticket.runId,
        "Unavailable",
        `The runner's report was refused: ${(error as Error).message}`,
        [],
      );
      return await getRun(ctx, ticket.runId);
    }
  } finally {
    controller.signal.removeEventListener("abort", leaveQueue);
    held?.release();
    ctx.platform.activeRuns.delete(ticket.runId);
  }
}

export async function cancelRun(ctx: ServiceContext, runId: string): Promise<CodeRunRecord> {
  const principal = requirePermission(ctx.principal, "apps.use");
  const run = await loadRun(ctx, runId);
  // A reader of the chat sees the run and is told they may not stop it; anyone else is not told it exists.
  await ownedChat(ctx.platform.db, principal, run.chat_id).catch((error: unknown) => {
    if (isAppError(error) && error.code === "FORBIDDEN")
      throw new AppError("FORBIDDEN", "Only the chat's owner or an admin can stop this code run.");
    throw new AppError("NOT_FOUND", "No such code run.");
  });
  // A run that has already ended keeps its ending: nothing is settled, withdrawn or announced again
  // (a second cancel, or one that crossed the run's own ending, answers with the record as it is).
  if (!isLiveRunStatus(run.status)) return getRun(ctx, runId);
  // The run is Cancelled in the record at once (whether or not its host is still alive); the instance
  // hosting it hears `run-cancel` (through NOTIFY when it is another one) and stops the program.
  await failRun(ctx, runId, "Cancelled", "The program was stopped.", []);
  ctx.platform.events.emit("run-cancel", { runId });
  logEvent("code_run_cancelled", { runId });
  return getRun(ctx, runId);
}

/**
 * The platform's typed event bus. Record changes for live views (`run`, `run-log`, `turn`) and domain
 * events that upper layers subscribe to (`run-settled`, `direct-call-settled`: the agent posts late
 * results), so a lower layer never imports or calls an upper one. A listener's failure is its own
 * (listeners that do work hand it to `platform.track`).
 *
 * Shared events (SHARED_EVENTS) also reach every other instance on the same database: `attach` gives the
 * bus a publisher (server/cluster.ts sends them through Postgres NOTIFY) and `deliver` hands an event
 * another instance published to this instance's listeners only. Domain events stay in the instance that
 * raised them: their work is a durable job (server/jobs.ts), taken by one instance.
 */
import "server-only";
import { EventEmitter } from "node:events";
import type { CallOutcome, LogLine } from "@/contracts/engine";
import type { TurnEvent } from "@/contracts/turn-events";

export interface PlatformEvents {
  /** A run's record (or a chat's decisions) changed. */
  run: [{ runId: string | null; chatId?: string | null }];
  /** A log line of a server-side run, as it happens. */
  "run-log": [{ runId: string; line: LogLine }];
  /** A turn's live event. */
  turn: [{ chatId: string; event: TurnEvent }];
  /** Someone cancelled a run: the instance hosting it stops its program. */
  "run-cancel": [{ runId: string }];
  /** Someone stopped a turn: the instance running its model stops it. */
  "turn-stop": [{ turnId: string }];
  /** An admin changed the platform settings: every instance applies what it holds from them (run caps). */
  "settings-changed": [{ version: number }];
  /** A connection was added, edited or removed: every instance reloads it from the table. */
  "connection-changed": [{ connectionId: string }];
  /**
   * A run ended (Completed, Failed or Cancelled); its turn may have moved on long ago. `turnId`: null when
   * the run is known to have no turn (nothing to post to a model later), absent when not known here.
   * `openTasks`: false when the statement that ended it saw no task of the run out at an App.
   */
  "run-settled": [{ runId: string; turnId?: string | null; openTasks?: false }];
  /** A person decided a program's call; the run is run again once none of its decisions is pending. */
  "decision-decided": [{ decisionId: string; runId: string }];
  /** An older server's question was answered and its call came back: the program's call gets this outcome (parked.ts). */
  "app-input-result": [{ operationId: string; outcome: CallOutcome }];
  /** A program's call parked on input was answered or settled: the run is run again once nothing else waits. */
  "input-answered": [{ runId: string; operationId: string; key: string }];
  /** An attempt ended with every pending call waiting for a decision (the run is Waiting now). */
  "run-waiting": [{ runId: string }];
  /** A direct App call that waited for a decision was decided and, when allowed, sent. */
  "direct-call-settled": [{ chatId: string; keyId: string | null; summary: string; payload: unknown }];
}

export type SharedEvent =
  | "run"
  | "run-log"
  | "turn"
  | "run-cancel"
  | "turn-stop"
  | "connection-changed"
  | "settings-changed";
export const SHARED_EVENTS: readonly SharedEvent[] = [
  "run",
  "run-log",
  "turn",
  "run-cancel",
  "turn-stop",
  "connection-changed",
  "settings-changed",
];
const SHARED = new Set<string>(SHARED_EVENTS);
const plainEmit = EventEmitter.prototype.emit as (this: EventEmitter, name: unknown, ...args: unknown[]) => boolean;

export type Publisher = <E extends SharedEvent>(name: E, payload: PlatformEvents[E][0]) => void;

export class EventBus extends EventEmitter<PlatformEvents> {
  private publisher: Publisher | null = null;

  constructor() {
    super();
    this.setMaxListeners(0);
  }

  /** Shared events emitted from now on are also published to the other instances. */
  attach(publisher: Publisher | null): void {
    this.publisher = publisher;
  }

  override emit<K>(
    name: K | keyof PlatformEvents,
    ...args: K extends keyof PlatformEvents ? PlatformEvents[K] : never
  ): boolean {
    const delivered = plainEmit.call(this, name, ...(args as unknown[]));
    if (this.publisher && typeof name === "string" && SHARED.has(name)) {
      this.publisher(name as SharedEvent, args[0] as never);
    }
    return delivered;
  }

  /** An event another instance published: this instance's listeners only, never published again. */
  deliver<E extends SharedEvent>(name: E, payload: PlatformEvents[E][0]): void {
    plainEmit.call(this, name, payload);
  }
}

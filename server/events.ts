/**
 * The platform's typed event bus. Record changes for live views (`run`, `run-log`, `turn`) and domain
 * events that upper layers subscribe to (`run-settled`, `direct-call-settled`: the agent posts late
 * results), so a lower layer never imports or calls an upper one. In-process; a listener's failure is
 * its own (listeners that do work hand it to `platform.track`).
 */
import "server-only";
import { EventEmitter } from "node:events";
import type { LogLine } from "@/contracts/engine";
import type { TurnEvent } from "@/contracts/turn-events";

export interface PlatformEvents {
  /** A run's record (or a chat's decisions) changed. */
  run: [{ runId: string | null; chatId?: string | null }];
  /** A log line of a server-side run, as it happens. */
  "run-log": [{ runId: string; line: LogLine }];
  /** A turn's live event. */
  turn: [{ chatId: string; event: TurnEvent }];
  /** A run ended (Completed, Failed or Cancelled); its turn may have moved on long ago. */
  "run-settled": [{ runId: string }];
  /** A person decided a program's call; the run is run again once none of its decisions is pending. */
  "decision-decided": [{ decisionId: string; runId: string }];
  /** An attempt ended with every pending call waiting for a decision (the run is Waiting now). */
  "run-waiting": [{ runId: string }];
  /** A direct App call that waited for a decision was decided and, when allowed, sent. */
  "direct-call-settled": [{ chatId: string; keyId: string | null; summary: string; payload: unknown }];
}

export class EventBus extends EventEmitter<PlatformEvents> {
  constructor() {
    super();
    this.setMaxListeners(0);
  }
}

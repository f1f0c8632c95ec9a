/**
 * Replay of recorded calls. A call whose index is in the record is checked against it (binding and
 * canonical arguments) before anything is sent, and its recorded outcome is released only in the
 * original completion order: a recorded call is delivered once every call before it in that order has
 * been delivered. Calls beyond the record are not this module's business.
 */
import type { CallOutcome, RecordedCall, ReplayLog } from "../contracts/engine";
import { canonicalJson } from "./canonical-json";

export type ReplayCheck = { kind: "live" } | { kind: "recorded" } | { kind: "mismatch"; message: string };

export class ReplaySchedule {
  private readonly recorded = new Map<number, RecordedCall>();
  private readonly canonicalArgs = new Map<number, string>();
  private readonly order: number[] = [];
  private position = 0;
  private readonly issued = new Set<number>();

  constructor(log: ReplayLog | undefined) {
    if (!log) return;
    for (const call of log.calls) this.recorded.set(call.index, call);
    const seen = new Set<number>();
    for (const index of log.completionOrder) {
      if (this.recorded.has(index) && !seen.has(index)) {
        seen.add(index);
        this.order.push(index);
      }
    }
    const rest = [...this.recorded.keys()].filter((index) => !seen.has(index)).sort((a, b) => a - b);
    this.order.push(...rest);
  }

  /** Classifies a call the program just issued; a recorded match is queued for delivery. */
  issue(index: number, binding: string, canonicalArgsJson: string): ReplayCheck {
    const record = this.recorded.get(index);
    if (!record) return { kind: "live" };
    if (record.binding !== binding) {
      return {
        kind: "mismatch",
        message: `call ${index} differs from the record: it was ${record.binding}, now ${binding}`,
      };
    }
    let expected = this.canonicalArgs.get(index);
    if (expected === undefined) {
      try {
        expected = canonicalJson(record.argsJson);
      } catch {
        expected = record.argsJson;
      }
      this.canonicalArgs.set(index, expected);
    }
    if (expected !== canonicalArgsJson) {
      return { kind: "mismatch", message: `call ${index} (${binding}) differs from the record: other arguments` };
    }
    this.issued.add(index);
    return { kind: "recorded" };
  }

  /** The next recorded outcome that may be delivered now, if any (and marks it delivered). */
  next(): { index: number; outcome: CallOutcome } | undefined {
    const index = this.order[this.position];
    if (index === undefined || !this.issued.has(index)) return undefined;
    const record = this.recorded.get(index);
    if (!record) return undefined;
    this.position++;
    this.issued.delete(index);
    return { index, outcome: record.outcome };
  }

  /** Recorded calls the program issued that wait behind a recorded call it never issued. */
  get blocked(): boolean {
    return this.issued.size > 0;
  }

  /** The recorded call the delivery order waits for. */
  get awaited(): number | undefined {
    return this.order[this.position];
  }
}

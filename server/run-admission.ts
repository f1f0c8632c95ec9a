/**
 * Admission of server-side runs: at most `maxServerRuns` programs run at once on this instance, at most
 * `maxServerRunsPerUser` of them for one person; the rest wait in one first-come queue (a person at their
 * own cap does not hold back others while total slots are free). A request that would put more than
 * `maxQueuedRunsPerUser` of one person's runs in the queue is refused with TOO_MANY_REQUESTS, unless it
 * is background work the server owes (a re-run after a decision, a takeover), which always queues.
 * In-process state only: each instance bounds its own runner. Knows nothing about runs or the database.
 * A refusal is returned as data, never thrown: the instance lives on the platform, which Next may have
 * built in another module graph than the caller (instrumentation vs route handlers).
 */
import "server-only";
import type { CodeModeSettings } from "@/contracts/settings";

export type AdmissionLimits = Pick<CodeModeSettings, "maxServerRuns" | "maxServerRunsPerUser" | "maxQueuedRunsPerUser">;

/** A place in the runner: held from admission until `release`. */
/** Why a request was not even queued: the person's queue is full. */
export interface RunRefusal {
  refused: true;
  message: string;
  details: { running: number; queued: number; maxQueuedRunsPerUser: number };
}

export interface RunPass {
  refused?: undefined;
  /** True when a slot was free at once (nothing to wait for). */
  readonly immediate: boolean;
  /** Resolves true once the run may start, false if the pass was released before that. */
  readonly admitted: Promise<boolean>;
  /** Frees the slot, or leaves the queue. Safe to call more than once. */
  release(): void;
}

interface Waiter {
  userId: string;
  admit(): void;
}

export class RunAdmission {
  private running = 0;
  private readonly runningByUser = new Map<string, number>();
  private readonly queue: Waiter[] = [];
  private limits: AdmissionLimits;

  constructor(limits: AdmissionLimits) {
    this.limits = limits;
  }

  /** Runs admitted and runs waiting now, in total and for one person. */
  counts(userId?: string): { running: number; queued: number } {
    if (userId === undefined) return { running: this.running, queued: this.queue.length };
    return {
      running: this.runningByUser.get(userId) ?? 0,
      queued: this.queue.filter((w) => w.userId === userId).length,
    };
  }

  /**
   * Asks for a slot for one run of `userId` under the current settings (they apply to the queue from
   * now on). A refusal when `bounded` and the person's queue is full.
   */
  request(userId: string, limits: AdmissionLimits, options: { bounded: boolean }): RunPass | RunRefusal {
    this.limits = limits;
    if (this.fits(userId)) return this.grant(userId);
    const queued = this.counts(userId).queued;
    if (options.bounded && queued >= limits.maxQueuedRunsPerUser) {
      return {
        refused: true,
        message: `Too many programs of yours are waiting to run on the server (${queued} queued, limit ${limits.maxQueuedRunsPerUser}); try again when one has ended.`,
        details: { running: this.counts(userId).running, queued, maxQueuedRunsPerUser: limits.maxQueuedRunsPerUser },
      };
    }
    let state: "queued" | "admitted" | "released" = "queued";
    let settle!: (admitted: boolean) => void;
    const admitted = new Promise<boolean>((resolve) => {
      settle = resolve;
    });
    const waiter: Waiter = {
      userId,
      admit: () => {
        state = "admitted";
        this.take(userId);
        settle(true);
      },
    };
    this.queue.push(waiter);
    this.pump();
    return {
      immediate: false,
      admitted,
      release: () => {
        if (state === "released") return;
        if (state === "queued") {
          const at = this.queue.indexOf(waiter);
          if (at >= 0) this.queue.splice(at, 1);
          settle(false);
        } else this.give(userId);
        state = "released";
        this.pump();
      },
    };
  }

  /**
   * New caps take effect at once: queued runs that fit under raised caps are admitted now, not when the
   * next request or release happens to come (lowered caps hold back the queue; running programs go on).
   */
  apply(limits: AdmissionLimits): void {
    this.limits = limits;
    this.pump();
  }

  private fits(userId: string): boolean {
    const perUser = Math.min(this.limits.maxServerRunsPerUser, this.limits.maxServerRuns);
    return this.running < this.limits.maxServerRuns && (this.runningByUser.get(userId) ?? 0) < perUser;
  }

  private grant(userId: string): RunPass {
    this.take(userId);
    let released = false;
    return {
      immediate: true,
      admitted: Promise.resolve(true),
      release: () => {
        if (released) return;
        released = true;
        this.give(userId);
        this.pump();
      },
    };
  }

  private take(userId: string): void {
    this.running += 1;
    this.runningByUser.set(userId, (this.runningByUser.get(userId) ?? 0) + 1);
  }

  private give(userId: string): void {
    this.running -= 1;
    const left = (this.runningByUser.get(userId) ?? 1) - 1;
    if (left > 0) this.runningByUser.set(userId, left);
    else this.runningByUser.delete(userId);
  }

  /** Admits, in queue order, every waiter whose person is below their cap while total slots are free. */
  private pump(): void {
    for (let i = 0; i < this.queue.length && this.running < this.limits.maxServerRuns; ) {
      const waiter = this.queue[i]!;
      if (this.fits(waiter.userId)) {
        this.queue.splice(i, 1);
        waiter.admit();
      } else i += 1;
    }
  }
}

/**
 * The sign-in rate limit: failed sign-ins are counted per client address and overall over a sliding
 * minute. An address past its limit is refused until its oldest counted failure is a minute old; other
 * addresses are refused only while the overall count is over its (higher) limit. A success clears the
 * address's failures. Kept on globalThis: one count per process, whichever module graph asks.
 */
import "server-only";

export interface SignInLimits {
  /** Failed sign-ins one address may make per window. Default 10. */
  perAddress: number;
  /** Failed sign-ins all addresses together may make per window. Default 100. */
  overall: number;
  /** The window in ms. Default 60 000. */
  windowMs: number;
}

export const DEFAULT_SIGN_IN_LIMITS: SignInLimits = { perAddress: 10, overall: 100, windowMs: 60_000 };

export type SignInVerdict = { ok: true } | { ok: false; retryAfterSeconds: number; scope: "address" | "overall" };

export class SignInLimiter {
  private readonly failures = new Map<string, number[]>();
  private all: number[] = [];

  constructor(private readonly limits: SignInLimits = DEFAULT_SIGN_IN_LIMITS) {}

  /** May this address try to sign in now? */
  check(address: string, now = Date.now()): SignInVerdict {
    const mine = this.recent(address, now);
    if (mine.length >= this.limits.perAddress) return this.refuse(mine, now, "address");
    this.all = this.all.filter((t) => t > now - this.limits.windowMs);
    if (this.all.length >= this.limits.overall) return this.refuse(this.all, now, "overall");
    return { ok: true };
  }

  failed(address: string, now = Date.now()): void {
    this.failures.set(address, [...this.recent(address, now), now]);
    this.all.push(now);
    if (this.failures.size > 10_000) this.prune(now);
  }

  succeeded(address: string): void {
    this.failures.delete(address);
  }

  private recent(address: string, now: number): number[] {
    return (this.failures.get(address) ?? []).filter((t) => t > now - this.limits.windowMs);
  }

  private refuse(times: number[], now: number, scope: "address" | "overall"): SignInVerdict {
    const oldest = times[times.length - (scope === "address" ? this.limits.perAddress : this.limits.overall)] ?? now;
    return {
      ok: false,
      scope,
      retryAfterSeconds: Math.max(1, Math.ceil((oldest + this.limits.windowMs - now) / 1000)),
    };
  }

  private prune(now: number): void {
    for (const [address, times] of this.failures) {
      if (!times.some((t) => t > now - this.limits.windowMs)) this.failures.delete(address);
    }
  }
}

const KEY = Symbol.for("openbot.signInLimiter");

/** The process's limiter. */
export function signInLimiter(): SignInLimiter {
  const g = globalThis as { [KEY]?: SignInLimiter };
  g[KEY] ??= new SignInLimiter();
  return g[KEY];
}

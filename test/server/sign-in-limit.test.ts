/** The sign-in limiter's arithmetic (its HTTP behaviour is in test/e2e/security-http.spec.ts). */
import { describe, expect, it } from "vitest";
import { SignInLimiter } from "@/server/services/sign-in-limit";

describe("SignInLimiter", () => {
  const limits = { perAddress: 3, overall: 5, windowMs: 60_000 };

  it("refuses an address after its failures until the oldest is a window old; a success clears it", () => {
    const l = new SignInLimiter(limits);
    for (const t of [0, 10_000, 20_000]) l.failed("a", t);
    expect(l.check("a", 30_000)).toEqual({ ok: false, scope: "address", retryAfterSeconds: 30 });
    expect(l.check("b", 30_000)).toEqual({ ok: true });
    expect(l.check("a", 60_001)).toEqual({ ok: true });
    l.failed("a", 60_001);
    expect(l.check("a", 60_002)).toMatchObject({ ok: false, retryAfterSeconds: 10 });
    l.succeeded("a");
    expect(l.check("a", 60_003)).toEqual({ ok: true });
  });

  it("refuses everyone only while the overall count is over its limit", () => {
    const l = new SignInLimiter(limits);
    for (let i = 0; i < 5; i++) l.failed(`addr-${i}`, i * 1000);
    expect(l.check("fresh", 5_000)).toEqual({ ok: false, scope: "overall", retryAfterSeconds: 55 });
    expect(l.check("fresh", 60_001)).toEqual({ ok: true });
  });
});

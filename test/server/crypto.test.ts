/**
 * Encryption at rest (server/crypto.ts): IVs come from pooled CSPRNG draws (one draw per 256 seals instead of
 * one per seal), each IV handed out once; values still decrypt only at their own place and key.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it, vi } from "vitest";

const draws = vi.hoisted(() => ({ count: 0 }));
vi.mock("node:crypto", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:crypto")>();
  return {
    ...actual,
    randomBytes: ((size: number) => {
      draws.count += 1;
      return actual.randomBytes(size);
    }) as typeof actual.randomBytes,
  };
});

const { decrypt, encrypt, makeKeyRing } = await import("@/server/crypto");

describe("encrypt", () => {
  it("draws random bytes once per many values, never gives two values one IV, and each opens only at its place", () => {
    const ring = makeKeyRing(randomBytes(32));
    const before = draws.count;
    const values = Array.from({ length: 1_000 }, (_, i) => encrypt(ring, `value ${i}`, `t:${i}:c`));
    // 1,000 seals across several pool refills: about 4 draws (one per 256), where one per seal was 1,000.
    expect(draws.count - before).toBeLessThanOrEqual(5);
    const ivs = new Set(values.map((v) => v.split(":")[2]));
    expect(ivs.size).toBe(values.length);
    for (const [i, v] of values.entries()) expect(decrypt(ring, v, `t:${i}:c`)).toBe(`value ${i}`);
    expect(() => decrypt(ring, values[0]!, "t:1:c")).toThrow();
    expect(() => decrypt(makeKeyRing(randomBytes(32)), values[0]!, "t:0:c")).toThrow(/no key/);
  });

  it("the same plaintext at the same place seals to different values", () => {
    const ring = makeKeyRing(randomBytes(32));
    const a = encrypt(ring, "same", "t:1:c");
    const b = encrypt(ring, "same", "t:1:c");
    expect(a).not.toBe(b);
    expect(decrypt(ring, a, "t:1:c")).toBe(decrypt(ring, b, "t:1:c"));
  });
});

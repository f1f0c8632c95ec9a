/** A small seeded PRNG (mulberry32) so every bench run generates the same catalog and calendar. */
export interface Rng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max], both included. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  /** `count` distinct items in a random order. */
  sample<T>(items: readonly T[], count: number): T[];
  chance(p: number): boolean;
  /** A version-4-shaped UUID (what `randomUUID()` gives the apps), from this generator. */
  uuid(): string;
}

export function rng(seed: number): Rng {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  const pick = <T>(items: readonly T[]): T => items[int(0, items.length - 1)] as T;
  const hex = (n: number) => Array.from({ length: n }, () => int(0, 15).toString(16)).join("");
  return {
    next,
    int,
    pick,
    sample<T>(items: readonly T[], count: number): T[] {
      const copy = [...items];
      for (let i = copy.length - 1; i > 0; i--) {
        const j = int(0, i);
        [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
      }
      return copy.slice(0, count);
    },
    chance: (p) => next() < p,
    uuid: () => `${hex(8)}-${hex(4)}-4${hex(3)}-${pick(["8", "9", "a", "b"])}${hex(3)}-${hex(12)}`,
  };
}

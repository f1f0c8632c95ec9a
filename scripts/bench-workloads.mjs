/**
 * The workloads of issue 16 and its fixed reference figures, shared by the Node and browser benchmarks
 * (scripts/bench-sandbox.mjs, scripts/bench-sandbox-browser.mjs and its page). Plain ESM, no imports.
 */

/** 5,000 rows answered by one call in the bigresult workload. */
export const ROWS_JSON = JSON.stringify(
  Array.from({ length: 5000 }, (_, i) => ({
    id: i,
    name: `user ${i}`,
    email: `user${i}@example.com`,
    score: (i * 37) % 100,
  })),
);

export const WORKLOADS = [
  { name: "start", label: "start (return 1+1)", code: "return 1+1", n: 150, warm: 15 },
  {
    name: "fanout",
    label: "fanout (10 parallel calls)",
    code: "const r = await Promise.all(Array.from({ length: 10 }, (_, i) => apps.bench.echo({ i }))); return r.length;",
    n: 100,
    warm: 10,
  },
  {
    name: "sequential",
    label: "sequential (20 awaited calls)",
    code: "let n = 0; for (let i = 0; i < 20; i++) n += (await apps.bench.echo({ i })).i; return n;",
    n: 100,
    warm: 10,
  },
  {
    name: "bigresult",
    label: "bigresult (5,000 rows)",
    code: "const rows = await apps.bench.rows({ n: 5000 }); return rows.filter((r) => r.score >= 90).map((r) => r.id);",
    n: 20,
    warm: 3,
  },
  {
    name: "compute",
    label: "compute (1e6 loop)",
    code: "let s = 0; for (let i = 0; i < 1e6; i++) s += i % 7; return s;",
    n: 8,
    warm: 1,
  },
  {
    name: "concurrent",
    label: "8 runs at once × 20 ms call",
    code: "return (await apps.bench.slow({})).ok;",
    parallel: 8,
    n: 15,
    warm: 3,
  },
];

/** The fastest peer's figures from the table (ms; compute is V8 itself). Fixed reference numbers. */
export const PEERS = { start: 4.5, fanout: 4.5, sequential: 4.6, bigresult: 8.4, compute: 8.9, concurrent: 48 };

/**
 * The goal column: a ratio against the peer (start/fanout/sequential/bigresult) or against bare QuickJS.
 * `peer`: the peer's figure measured in the same run (scripts/bench-peer.mjs); without it, issue 16's fixed one.
 */
export function goalOf(name, bare, peer = PEERS[name]) {
  if (name === "compute") return { text: "≤ 1.2× bare", max: 1.2, ratio: (ours) => ours / bare };
  if (name === "concurrent") return { text: "≤ 2× bare", max: 2, ratio: (ours) => ours / bare };
  if (name === "bigresult") return { text: "≤ 1.0× peer", max: 1, ratio: (ours) => ours / peer };
  return { text: "≤ 0.2× peer", max: 0.2, ratio: (ours) => ours / peer };
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

export function fmt(value, digits = value < 10 ? 2 : 1) {
  return Number.isFinite(value) ? value.toFixed(digits) : "—";
}

export function printTable(rows) {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => String(row[column]).length)));
  for (const [i, row] of rows.entries()) {
    console.log(
      row
        .map((cell, column) =>
          column === 0 ? String(cell).padEnd(widths[column]) : String(cell).padStart(widths[column]),
        )
        .join("  "),
    );
    if (i === 0) console.log(widths.map((w) => "-".repeat(w)).join("  "));
  }
}

/**
 * The table `npm run bench:sandbox` prints when the peer was measured in the same run: bare quickjs-emscripten,
 * the peer (UTCP code-mode on isolated-vm, scripts/bench-peer.mjs) and ours in-process and on the server path,
 * with ours ÷ bare and ours ÷ peer, and the goals of issue 16 judged as ratios against those same-run figures.
 */
import { fmt, goalOf, PEERS, printTable, WORKLOADS } from "./bench-workloads.mjs";

/** `results[workload]`: { bare, inProcess, server, peer } medians (ms); `memory[workload]`: { bare, inProcess } MiB. */
export function printWithPeer(results, memory, describe) {
  console.log(`peer: ${describe}, in its own process, its turns interleaved with ours`);
  console.log(
    "medians in ms, all measured in this run; ×bare = ours ÷ bare quickjs-emscripten, ×peer = ours ÷ the peer\n",
  );
  const table = [
    [
      "workload",
      "bare",
      "peer",
      "in-process",
      "×bare",
      "×peer",
      "server",
      "×bare",
      "×peer",
      "goal",
      "in-proc",
      "server",
      "memory cap/run bare → ours",
    ],
  ];
  for (const workload of WORKLOADS) {
    const r = results[workload.name];
    const goal = goalOf(workload.name, r.bare, r.peer);
    const mark = (ours) => `${fmt(goal.ratio(ours), 2)} ${goal.ratio(ours) <= goal.max ? "ok" : "MISS"}`;
    const m = memory[workload.name];
    table.push([
      workload.label,
      fmt(r.bare),
      fmt(r.peer),
      fmt(r.inProcess),
      fmt(r.inProcess / r.bare, 2),
      fmt(r.inProcess / r.peer, 2),
      fmt(r.server),
      fmt(r.server / r.bare, 2),
      fmt(r.server / r.peer, 2),
      goal.text,
      mark(r.inProcess),
      mark(r.server),
      `${m.bare} → ${m.inProcess} MiB`,
    ]);
  }
  printTable(table);
  console.log(
    '\nin-proc / server columns: ours against the goal (ours ÷ peer or ours ÷ bare, this run), "ok" when within it',
  );
  // No µs-per-call figure for the peer: its start varies by more than its 20 calls cost, so
  // (sequential − start) / 20 reads noise (even below zero).
  console.log(
    `issue 16's run had the peer at ${WORKLOADS.map((w) => `${w.name} ${fmt(PEERS[w.name])}`).join(", ")} ms (fixed figures, for scale)`,
  );
}

/**
 * The table `npm run bench:sandbox` prints: bare quickjs-emscripten, the peer (UTCP code-mode on isolated-vm,
 * scripts/bench-peer.mjs, when it was measured in the same run; else issue 16's fixed figures) and ours in-process
 * and on the server path, with ours ÷ bare and ours ÷ peer, and the goals of issue 16 judged as ratios.
 */
import { fmt, goalOf, PEERS, printTable, WORKLOADS } from "./bench-workloads.mjs";

/**
 * `results[workload]`: { bare, inProcess, server, peer? } medians (ms); `memory[workload]`: { bare, inProcess } MiB;
 * `describe`: the peer's description when it was measured in this run, else undefined (the issue's fixed
 * figures stand in for it, and `hint` says how to add the peer).
 */
export function printSandboxTable(results, memory, describe, hint) {
  const measured = describe !== undefined;
  if (measured) {
    console.log(`peer: ${describe}, in its own process, its turns interleaved with ours`);
    console.log(
      "medians in ms, all measured in this run; ×bare = ours ÷ bare quickjs-emscripten, ×peer = ours ÷ the peer\n",
    );
  } else {
    console.log(
      "medians in ms; ×bare = ratio to bare quickjs-emscripten measured in this run; peer = issue 16's fixed figure\n",
    );
  }
  const table = [
    measured
      ? ["workload", "bare", "peer", "in-process", "×bare", "×peer", "server", "×bare", "×peer"]
      : ["workload", "bare", "in-process", "×bare", "server", "×bare", "peer"],
  ];
  table[0].push("goal", "in-proc", "server", "memory cap/run bare → ours");
  for (const workload of WORKLOADS) {
    const r = results[workload.name];
    const goal = measured ? goalOf(workload.name, r.bare, r.peer) : goalOf(workload.name, r.bare);
    const mark = (ours) => `${fmt(goal.ratio(ours), 2)} ${goal.ratio(ours) <= goal.max ? "ok" : "MISS"}`;
    const m = memory[workload.name];
    const bareRatio = (ours) => fmt(ours / r.bare, 2);
    const row = measured
      ? [
          fmt(r.bare),
          fmt(r.peer),
          fmt(r.inProcess),
          bareRatio(r.inProcess),
          fmt(r.inProcess / r.peer, 2),
          fmt(r.server),
          bareRatio(r.server),
          fmt(r.server / r.peer, 2),
        ]
      : [
          fmt(r.bare),
          fmt(r.inProcess),
          bareRatio(r.inProcess),
          fmt(r.server),
          bareRatio(r.server),
          fmt(PEERS[workload.name]),
        ];
    table.push([
      workload.label,
      ...row,
      goal.text,
      mark(r.inProcess),
      mark(r.server),
      `${m.bare} → ${m.inProcess} MiB`,
    ]);
  }
  printTable(table);
  if (measured) {
    console.log(
      '\nin-proc / server columns: ours against the goal (ours ÷ peer or ours ÷ bare, this run), "ok" when within it',
    );
    // No µs-per-call figure for the peer: its start varies by more than its 20 calls cost, so
    // (sequential − start) / 20 reads noise (even below zero).
    console.log(
      `issue 16's run had the peer at ${WORKLOADS.map((w) => `${w.name} ${fmt(PEERS[w.name])}`).join(", ")} ms (fixed figures, for scale)`,
    );
  } else {
    console.log('\nin-proc / server columns: ours against the goal (ours/peer or ours/bare), "ok" when within it');
    console.log(hint);
  }
}

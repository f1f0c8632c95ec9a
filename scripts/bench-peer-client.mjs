/**
 * The parent side of the peer bench: starts scripts/bench-peer.mjs under the Node 22 that
 * `npm run bench:peer-setup` installed into .bench-peer/, and asks it for one timed turn of a workload at a
 * time, so scripts/bench-sandbox.mjs can interleave the peer's turns with its own systems' (a load change on
 * this shared machine then hits all of them alike). The child times its own turns; the IPC hop is outside the
 * figure. Plain ESM, Node built-ins only.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PEER_DIR, PEER_NODE, PEER_PACKAGES } from "./bench-peer-paths.mjs";

const runner = path.join(path.dirname(fileURLToPath(import.meta.url)), "bench-peer.mjs");

export const PEER_HINT =
  "peer: not measured; `npm run bench:peer-setup` once (installs UTCP code-mode on isolated-vm with its own Node 22 into .bench-peer/, ~5 min) and bench:sandbox measures it in the same run, goals judged as ratios";

/** True when .bench-peer/ holds the Node 22 binary and every pinned peer package. */
export function peerInstalled() {
  return (
    existsSync(PEER_NODE) &&
    Object.keys(PEER_PACKAGES).every((name) => existsSync(path.join(PEER_DIR, "node_modules", name, "package.json")))
  );
}

/**
 * `wanted`: true (`--peer`: fail when not set up), false (`--no-peer`), undefined (measure it when set up).
 * Resolves to null when the peer is not measured, else { describe, turn(workloadName) → ms, close() }.
 */
export async function startPeer(wanted) {
  if (wanted === false) return null;
  if (!peerInstalled()) {
    if (wanted) throw new Error("--peer: the peer is not set up in .bench-peer/; run `npm run bench:peer-setup` first");
    return null;
  }
  // isolated-vm needs --no-node-snapshot on Node ≥ 20. The SDK logs every tool call to stdout: /dev/null.
  const child = spawn(PEER_NODE, ["--no-node-snapshot", runner], { stdio: ["ignore", "ignore", "inherit", "ipc"] });
  const waiting = new Map();
  let nextId = 0;
  let ended;
  const fail = (error) => {
    ended = error;
    for (const { reject } of waiting.values()) reject(error);
    waiting.clear();
  };
  let ready;
  const readyPromise = new Promise((resolve, reject) => (ready = { resolve, reject }));
  child.on("error", (error) => {
    fail(new Error(`the peer runner could not start (${error.message}); run \`npm run bench:peer-setup\` again`));
    ready.reject(ended);
  });
  child.on("exit", (code, signal) => {
    if (ended) return;
    fail(new Error(`the peer runner ended (${signal ?? `exit ${code}`}) before the bench did`));
    ready.reject(ended);
  });
  child.on("message", (message) => {
    if (message?.type === "ready") {
      ready.resolve(message.describe);
      return;
    }
    const pending = waiting.get(message?.id);
    if (!pending) return;
    waiting.delete(message.id);
    if (message.type === "turn") pending.resolve(message.ms);
    else pending.reject(new Error(`peer: ${message.message}`));
  });
  const describe = await readyPromise;
  return {
    describe,
    turn: (workload) =>
      new Promise((resolve, reject) => {
        if (ended) {
          reject(ended);
          return;
        }
        const id = nextId++;
        waiting.set(id, { resolve, reject });
        child.send({ type: "turn", id, workload });
      }),
    // isolated-vm 6.1.1 on Node 22 can hang or crash in its exit hooks once code-mode has disposed an
    // isolate whose script run had not yet settled (code-mode does so after every run), so the child is
    // ended by a signal rather than asked to exit.
    close: () => {
      ended = new Error("the peer runner was closed");
      child.kill("SIGKILL");
    },
  };
}

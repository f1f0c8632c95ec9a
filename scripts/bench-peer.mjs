/**
 * The peer of issue 16 for `npm run bench:sandbox`: UTCP code-mode (`CodeModeUtcpClient.callToolChain`, one
 * isolated-vm isolate per run) answering the same workloads (scripts/bench-workloads.mjs) with the same tools
 * as ours, answered by this process the way the bench answers ours. Run by the Node 22 that
 * `npm run bench:peer-setup` installs (isolated-vm 6 needs Node ≥ 22 and `--no-node-snapshot`), as a child of
 * scripts/bench-sandbox.mjs over an IPC channel: each `turn` message runs one workload twice back to back and
 * answers the second's milliseconds, timed here (the IPC hop is not in the figure), exactly as the parent times
 * its own systems. The first turn of each workload also checks the peer's answer against the same program run
 * directly by this Node with the same tools.
 *
 * The peer's tools are registered through the SDK's documented plugin points (a call template type and a
 * CommunicationProtocol, our own few lines); its tool functions return values (its API takes no JSON text), so
 * the 5,000 rows are a parsed array that code-mode stringifies per call. The SDK logs a line per tool call to
 * stdout by design; the parent sends this process's stdout to /dev/null, and our own output goes to stderr.
 */
import { createRequire } from "node:module";
import path from "node:path";
import { isDeepStrictEqual } from "node:util";
import { PEER_DIR, PEER_PACKAGES } from "./bench-peer-paths.mjs";
import { ROWS_JSON, WORKLOADS } from "./bench-workloads.mjs";

const require = createRequire(path.join(PEER_DIR, "package.json"));
// CommonJS on both sides, so code-mode and this file see the one SDK instance (its plugin registries are statics).
const { CodeModeUtcpClient } = require("@utcp/code-mode");
const { CallTemplateSerializer, CommunicationProtocol, UtcpManualSerializer } = require("@utcp/sdk");

const LIMITS = { timeoutMs: 10_000, memoryMb: 64 };
const ROWS = JSON.parse(ROWS_JSON);
const TEMPLATE_TYPE = "openbot_bench";

/** The bench's three tools, answered in this process as scripts/bench-sandbox.mjs answers ours. */
const answer = {
  echo: async (args) => args,
  rows: async () => ROWS,
  slow: () => new Promise((resolve) => setTimeout(() => resolve({ ok: true }), 20)),
};

CallTemplateSerializer.registerCallTemplate(TEMPLATE_TYPE, {
  toDict: (template) => ({ ...template }),
  validateDict: (template) => {
    if (template?.call_template_type !== TEMPLATE_TYPE) throw new Error(`not a ${TEMPLATE_TYPE} call template`);
    return { ...template };
  },
});

class BenchProtocol extends CommunicationProtocol {
  async registerManual(_caller, manualCallTemplate) {
    const tools = Object.keys(answer).map((name) => ({
      name,
      description: `bench ${name}`,
      inputs: { type: "object" },
      tool_call_template: { call_template_type: TEMPLATE_TYPE, name: manualCallTemplate.name, tool: name },
    }));
    // The SDK's own manual serializer fills the defaults (tags, outputs) code-mode reads, as its plugins do.
    const manual = new UtcpManualSerializer().validateDict({ tools });
    return { manualCallTemplate, manual, success: true, errors: [] };
  }
  async deregisterManual() {}
  async callTool(_caller, _toolName, toolArgs, toolCallTemplate) {
    const tool = answer[toolCallTemplate.tool];
    if (!tool) throw new Error(`no bench tool ${toolCallTemplate.tool}`);
    return tool(toolArgs);
  }
  // biome-ignore lint/correctness/useYield: the bench calls no tool streamingly
  async *callToolStreaming() {
    throw new Error("the bench calls no tool streamingly");
  }
}
CommunicationProtocol.communicationProtocols[TEMPLATE_TYPE] = new BenchProtocol();

const client = await CodeModeUtcpClient.create(process.cwd(), null);
const registered = await client.registerManual({ name: "bench", call_template_type: TEMPLATE_TYPE });
if (!registered.success) throw new Error(`registering the bench manual failed: ${registered.errors.join("; ")}`);

// code-mode puts a manual's tools on a global named after it (`bench.echo`); our programs say `apps.bench.echo`.
const peerCode = (code) => `const apps = { bench };\n${code}`;
const runOnce = async (workload) => {
  const { result, logs } = await client.callToolChain(peerCode(workload.code), LIMITS.timeoutMs, LIMITS.memoryMb);
  const failure = logs.find((line) => line.startsWith("[ERROR]"));
  if (failure || result === null) throw new Error(`peer run of ${workload.name} failed: ${failure ?? "no result"}`);
  return result;
};
const once = (workload) =>
  workload.parallel
    ? Promise.all(Array.from({ length: workload.parallel }, () => runOnce(workload)))
    : runOnce(workload);

/** The same program run straight by this Node with the same tools: what the peer's answer must equal. */
const AsyncFunction = (async () => {}).constructor;
const direct = (workload) => {
  const apps = { bench: answer };
  const one = () => new AsyncFunction("apps", workload.code)(apps).then((value) => JSON.parse(JSON.stringify(value)));
  return workload.parallel ? Promise.all(Array.from({ length: workload.parallel }, one)) : one();
};
const checked = new Set();
const check = async (workload) => {
  const [ours, expected] = [await once(workload), await direct(workload)];
  if (!isDeepStrictEqual(ours, expected)) {
    throw new Error(
      `peer answered ${workload.name} with ${JSON.stringify(ours).slice(0, 200)}, expected ${JSON.stringify(expected).slice(0, 200)}`,
    );
  }
  checked.add(workload.name);
};

/** One turn as the parent takes its own: twice back to back, the second timed (no idle time before it). */
const turn = async (workload) => {
  if (!checked.has(workload.name)) await check(workload);
  await once(workload);
  const started = performance.now();
  await once(workload);
  return performance.now() - started;
};

const describe = `UTCP code-mode ${PEER_PACKAGES["@utcp/code-mode"]} on isolated-vm ${PEER_PACKAGES["isolated-vm"]}, node ${process.version}`;

if (!process.send) {
  console.error("scripts/bench-peer.mjs runs as a child of `npm run bench:sandbox` (scripts/bench-peer-client.mjs)");
  process.exit(2);
}
// isolated-vm 6.1.1 on Node 22 can hang in its exit hooks after code-mode's runs (see bench-peer-client.mjs):
// when the parent goes, this process ends by a signal instead of exiting.
process.on("disconnect", () => process.kill(process.pid, "SIGKILL"));
const byName = new Map(WORKLOADS.map((workload) => [workload.name, workload]));
process.on("message", (message) => {
  const workload = byName.get(message?.workload);
  if (message?.type !== "turn" || !workload) {
    process.send({ type: "error", id: message?.id, message: `unknown request ${JSON.stringify(message)}` });
    return;
  }
  turn(workload).then(
    (ms) => process.send({ type: "turn", id: message.id, ms }),
    (error) => process.send({ type: "error", id: message.id, message: String(error?.message ?? error) }),
  );
});
process.send({ type: "ready", describe });

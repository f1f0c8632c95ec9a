/**
 * The browser benchmark's floor: bare quickjs-emscripten in a Web Worker (a fresh runtime + context per
 * run, one host function whose calls the page answers over postMessage). No limits, no prelude.
 */

import RELEASE_SYNC from "@jitl/quickjs-wasmfile-release-sync";
import { newQuickJSWASMModuleFromVariant } from "quickjs-emscripten-core";

const quickjs = await newQuickJSWASMModuleFromVariant(RELEASE_SYNC);
const answers = new Map();
let nextCall = 0;

function run(id, code) {
  const runtime = quickjs.newRuntime();
  const ctx = runtime.newContext();
  let program;
  const check = () => {
    const state = ctx.getPromiseState(program);
    if (state.type === "pending") return;
    const value = state.type === "fulfilled" ? ctx.getString(state.value) : "failed";
    (state.value ?? state.error).dispose();
    program.dispose();
    ctx.dispose();
    runtime.dispose();
    postMessage({ type: "done", id, value });
  };
  const call = ctx.newFunction("call", (bindingHandle, argsHandle) => {
    const deferred = ctx.newPromise();
    const callId = nextCall++;
    answers.set(callId, (resultJson) => {
      const value = ctx.newString(resultJson);
      deferred.resolve(value);
      value.dispose();
      deferred.dispose();
      runtime.executePendingJobs();
      check();
    });
    postMessage({
      type: "call",
      id,
      callId,
      binding: ctx.getString(bindingHandle),
      argsJson: ctx.getString(argsHandle),
    });
    return deferred.handle;
  });
  ctx.setProp(ctx.global, "call", call);
  call.dispose();
  const result = ctx.evalCode(`(async () => {
    const bind = (name) => async (args) => JSON.parse(await call(name, JSON.stringify(args)));
    const apps = { bench: { echo: bind("bench.echo"), rows: bind("bench.rows"), slow: bind("bench.slow") } };
    return JSON.stringify(await (async () => { ${code} })());
  })()`);
  if (result.error) {
    result.error.dispose();
    postMessage({ type: "done", id, value: "failed" });
    return;
  }
  program = result.value;
  runtime.executePendingJobs();
  check();
}

addEventListener("message", (event) => {
  const message = event.data;
  if (message.type === "run") run(message.id, message.code);
  else if (message.type === "answer") {
    const resolve = answers.get(message.callId);
    answers.delete(message.callId);
    resolve?.(message.resultJson);
  }
});
postMessage({ type: "ready" });

import { loadEngine } from "../dist/worker/engine.mjs";
const engine = await loadEngine();
const limits = { timeoutMs: 1000, memoryMb: 64, outputBytes: 65536, maxPendingCalls: 16 };
const base = { time: Date.UTC(2026, 9, 23, 9), seed: 42, limits, bindings: ["work_calendar.list_events"], vaultNames: ["github/token"] };
const events = { "2026-10-23": [{ id: 1, title: "Standup", attendees: 5 }, { id: 2, title: "All hands", attendees: 120 }], "2026-10-24": [{ id: 3, title: "Offsite", attendees: 14 }] };
const host = { calls: [], async call(req) { host.calls.push(req); const { day } = JSON.parse(req.argsJson); return { type: "ok", resultJson: JSON.stringify({ structuredContent: { events: events[day] ?? [] } }) }; } };
let t = performance.now();
const out = await engine.run({ ...base, code: `
  const [a, b] = await Promise.all([
    apps.work_calendar.list_events({ day: "2026-10-23" }),
    apps.work_calendar.list_events({ day: "2026-10-24" }),
  ]);
  const all = [...a.structuredContent.events, ...b.structuredContent.events];
  console.log("events", all.length, { first: all[0] }, vault.github.token, new Date().toString(), Math.random());
  text("hi"); json({x: 1});
  return all.filter(e => e.attendees > 10).map(e => e.title);
` }, host);
console.log(performance.now() - t, JSON.stringify(out), host.calls);
for (const code of [`while(true){}`, `let a = []; while (true) a.push(new Uint8Array(1<<20))`, `throw new TypeError("boom")`, `return "x".repeat(70000)`, `function f(){return f()}; return f()`, `try { await apps.call("__proto__.x", {}) } catch (e) { return String(e) }`, `return constructor.constructor('return this')() === globalThis`, `return typeof SharedArrayBuffer + typeof WeakRef + typeof fetch + typeof require`, `await new Promise(() => {})`, `a b c`]) {
  t = performance.now();
  const o = await engine.run({ ...base, code }, host);
  console.log(Math.round(performance.now() - t), code.slice(0, 40), "=>", o.status, o.reason ?? "", o.message ?? o.valueJson);
}

/**
 * The guest half of the bridge: JavaScript evaluated in every fresh QuickJS context before the program.
 * It saves the intrinsics it relies on (JSON, Reflect.apply, Object.defineProperty, …) so a program that
 * overwrites them cannot change what crosses the bridge, removes what a program must not have, fixes
 * time, zone and randomness, and builds `apps`, `vault`, `console`, `text` and `json` over host functions
 * that take and give strings only. Evaluated, it is a function that does all of this that is the same for
 * every run and returns `configure(hostLog, hostOut, hostLoad, configJson, logBox)`; a prepared context has run it
 * already, before any program. `configure` applies one run's host functions and settings and returns the
 * host's one entry into the guest, `bridge(op, slot, text)` (ops in `BRIDGE`): start the program, whose
 * promise resolves to one envelope string: "V<json>" (value), "T<length>" (value too large),
 * "E<name: message>" (error); take the calls queued since the last take; settle one call.
 *
 * App calls cross no host function: `invoke` queues each call (slot numbers count up from 0 per run) and
 * returns a promise of its own; after each slice the host takes every queued call as one string of frames
 * `<name.length>:<name><args.length>:<args>` (0 if none; their length first if long, see `takeCalls`) and later settles each slot with its result or
 * error envelope.
 * One crossing per slice instead of a host function call and a host-made promise per call.
 *
 * Compiling JavaScript is most of the cost of starting a run (QuickJS parses ~10 KB per ms here), so the
 * prelude is split: the core (`PRELUDE_SOURCE`) is compiled for every run and holds only what every run
 * needs; the parts in `PRELUDE_PARTS` (the console/text() inspector and error descriptions, Date strings
 * and parsing, app-call errors) are compiled into the same context on first use, through `hostLoad`. A
 * part is a function of `K`, an object of intrinsics the core saved before the program ran, and refers to
 * nothing else (no global names other than the non-writable `undefined`), so a part compiled after the
 * program changed globals or prototypes behaves exactly as if it had been compiled up front.
 *
 * Over 400 lines on purpose: it is the guest-side source compiled into every context, kept as one module so
 * the core and its on-demand parts are reviewed together against the same saved intrinsics.
 */

/** Settings the host hands to the prelude, as JSON. */
export interface PreludeConfig {
  bindings: string[];
  vaultNames: string[];
  time: number;
  seed: number;
  /** Longest argument JSON (in UTF-16 units) a call may carry. */
  argsMax: number;
  /** Longest return value JSON (in UTF-16 units) before the exact byte check on the host. */
  valueMax: number;
  /** Log bytes the program may still write. */
  logMax: number;
}

/** Names of the lazily compiled parts; `hostLoad(name)` evaluates `PRELUDE_PARTS[name]`. */
export type PreludePart = "inspect" | "date" | "appError";

/**
 * Intrinsics saved into `K` by the core before the program runs, as [name, expression in the core's
 * scope]. The core builds `K` from this list and each part unpacks it with object destructuring (own
 * properties only, so neither iterators nor prototypes of the guest are consulted).
 */
const SAVED: readonly (readonly [string, string])[] = [
  ["apply", "apply"],
  ["define", "define"],
  ["ownKeys", "ownKeys"],
  ["getPrototypeOf", "Object.getPrototypeOf"],
  ["getOwnPropertyDescriptor", "getOwnPropertyDescriptor"],
  ["isArray", "Array.isArray"],
  ["StringCtor", "String"],
  ["parseIntFn", "parseInt"],
  ["parseFloatFn", "parseFloat"],
  ["JSONParse", "JSONParse"],
  ["JSONStringify", "JSONStringify"],
  ["ErrorCtor", "Error"],
  ["TypeErrorCtor", "TypeErrorCtor"],
  ["RangeErrorCtor", "RangeErrorCtor"],
  ["ErrorProto", "Error.prototype"],
  ["ObjectProto", "Object.prototype"],
  ["PromiseProto", "Promise.prototype"],
  ["OrigDate", "OrigDate"],
  ["DateProto", "DateProto"],
  ["DateParse", "Date.parse"],
  ["DateGetTime", "DateProto.getTime"],
  ["DateToISO", "DateProto.toISOString"],
  ["DateHostOffset", "DateProto.getTimezoneOffset"],
  ["utc", "utc"],
  ["RegExpProto", "RegExpProto"],
  ["RegExpTest", "RegExpProto.test"],
  ["RegExpExec", "RegExpProto.exec"],
  ["RegExpToString", "RegExpProto.toString"],
  ["StrIndexOf", "StrIndexOf"],
  ["StrSlice", "StrSlice"],
  ["StrReplace", "StrProto.replace"],
  ["cut", "cut"],
  ["keepFor", "keepFor"],
  ["SymbolToString", "Symbol.prototype.toString"],
  ["FunctionToString", "Function.prototype.toString"],
  ["MapProto", "MapProto"],
  ["MapForEach", "MapProto.forEach"],
  ["MapSize", 'getOwnPropertyDescriptor(MapProto, "size").get'],
  ["SetCtor", "Set"],
  ["SetProto", "SetProto"],
  ["SetAdd", "SetProto.add"],
  ["SetHas", "SetProto.has"],
  ["SetDelete", "SetProto.delete"],
  ["SetForEach", "SetProto.forEach"],
  ["SetSize", 'getOwnPropertyDescriptor(SetProto, "size").get'],
  ["TypedArrayProto", "TypedArrayProto"],
  ["TypedArrayLength", 'getOwnPropertyDescriptor(TypedArrayProto, "length").get'],
  ["TypedArrayTag", "getOwnPropertyDescriptor(TypedArrayProto, Symbol.toStringTag).get"],
];

const SAVED_OBJECT = `{ ${SAVED.map(([name, expr]) => (name === expr ? name : `${name}: ${expr}`)).join(", ")} }`;

/** The start of every part: strict mode, and `K` unpacked into the names the part uses. */
function part(names: string[], body: string): string {
  for (const name of names) {
    if (!SAVED.some(([saved]) => saved === name)) throw new Error(`prelude part uses unsaved intrinsic ${name}`);
  }
  return `(function (K) {\n"use strict";\nconst { ${names.join(", ")} } = K;\n${body}\n})`;
}

/** The operations of the prelude's `bridge(op, slot, value)`, the host's one entry into a configured context. */
export const BRIDGE = { start: 0, take: 1, resolve: 2, reject: 3 } as const;
/** Longest text of queued calls the prelude's take hands over without the host asking twice (see `takeCalls`). */
export const TAKE_SMALL_CHARS = 4096;
/**
 * Log lines wait in the run's log box (see `console` in the prelude) until the host takes them: at the end of
 * every slice, or sooner once this many lines or `LOG_BOX_CHARS` characters wait.
 */
export const LOG_BOX_LINES = 64;
export const LOG_BOX_CHARS = 16384;
/** The level of each waiting line, one character each, in the log box's `levels`. */
export const LOG_LEVEL_CHARS = { log: "0", info: "1", warn: "2", error: "3" } as const;

export const PRELUDE_SOURCE = String.raw`(function () {
"use strict";
let hostLog, hostOut, hostLoad, config;
const G = globalThis, apply = Reflect.apply, ownKeys = Reflect.ownKeys, JSONParse = JSON.parse, JSONStringify = JSON.stringify;
const ObjectCreate = Object.create, defineProperty = Object.defineProperty, freeze = Object.freeze;
const getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
const StrProto = String.prototype, StrIndexOf = StrProto.indexOf, StrSlice = StrProto.slice;
const TypeErrorCtor = TypeError, RangeErrorCtor = RangeError, PromiseCtor = Promise, PromiseReject = Promise.reject;
const MapCtor = Map, MapProto = Map.prototype, MapHas = MapProto.has, MapSet = MapProto.set, SetProto = Set.prototype;
const ArrayJoin = Array.prototype.join;
const OrigDate = Date, DateProto = Date.prototype, RegExpProto = RegExp.prototype, construct = Reflect.construct;
const TypedArrayProto = Object.getPrototypeOf(Uint8Array.prototype), AsyncFunction = (async function () {}).constructor;
const utc = ObjectCreate(null);
const K = ${SAVED_OBJECT};

for (const name of ["SharedArrayBuffer", "Atomics", "WeakRef", "FinalizationRegistry", "WebAssembly"]) delete G[name];

function define(target, key, value, enumerable) {
  defineProperty(target, key, { __proto__: null, value: value, writable: true, enumerable: enumerable, configurable: true });
}
function sliceStr(s, a, b) { return apply(StrSlice, s, [a, b]); }
const loaded = ObjectCreate(null);
function lazy(name) { return loaded[name] || (loaded[name] = hostLoad(name)(K)); }

// Randomness: sfc32 seeded from the run's seed.
let ra = 0, rb = 0, rc = 0, rd = 0;
function sfc32() {
  const t = (((ra + rb) | 0) + rd) | 0;
  rd = (rd + 1) | 0; ra = rb ^ (rb >>> 9); rb = (rc + (rc << 3)) | 0;
  rc = (rc << 21) | (rc >>> 11); rc = (rc + t) | 0;
  return (t >>> 0) / 4294967296;
}
define(Math, "random", function random() { return sfc32(); }, false);

// Time: fixed instant, and every local-time view is UTC so hosts in different zones agree.
let fixedTime = 0;
const DateUTC = Date.UTC;
function FixedDate() {
  const n = arguments.length;
  if (new.target === undefined) return apply(DateProto.toString, new OrigDate(fixedTime), []);
  let t;
  if (n === 0) t = fixedTime;
  else if (n === 1) {
    const v = arguments[0];
    t = typeof v === "string" ? lazy("date").parseUTC(v) : v;
  } else t = apply(DateUTC, OrigDate, arguments);
  return construct(OrigDate, [t], new.target);
}
defineProperty(FixedDate, "prototype", { value: DateProto, writable: false });
define(DateProto, "constructor", FixedDate, false);
define(FixedDate, "now", function now() { return fixedTime; }, false);
define(FixedDate, "UTC", DateUTC, false);
define(FixedDate, "parse", function parse(s) { return lazy("date").parseUTC(s); }, false);
for (const part of ["FullYear", "Month", "Date", "Day", "Hours", "Minutes", "Seconds", "Milliseconds"]) {
  define(DateProto, "get" + part, utc[part] = DateProto["getUTC" + part], false);
  if (part !== "Day") define(DateProto, "set" + part, DateProto["setUTC" + part], false);
}
define(DateProto, "getTimezoneOffset", function getTimezoneOffset() { apply(DateProto.getTime, this, []); return 0; }, false);
define(DateProto, "getYear", function getYear() { return apply(utc.FullYear, this, []) - 1900; }, false);
define(DateProto, "setYear", function setYear(year) {
  const t = apply(DateProto.getTime, this, []), y = +year, n = y - y % 1;
  if (y !== y) return apply(DateProto.setTime, this, [NaN]);
  const u = new OrigDate(t === t ? t : 0);
  apply(DateProto.setUTCFullYear, u, [n >= 0 && n <= 99 ? 1900 + n : y]);
  return apply(DateProto.setTime, this, [apply(DateProto.getTime, u, [])]);
}, false);
for (const name of ["toString", "toDateString", "toTimeString", "toLocaleString", "toLocaleDateString", "toLocaleTimeString"]) {
  define(DateProto, name, { [name]() { return lazy("date").format(name, this); } }[name], false);
}
define(G, "Date", FixedDate, false);

// Console, text(), json(). Strings, numbers, booleans, null and undefined need no inspector.
// A string longer than what the host keeps is cut before it is formatted or leaves: copying a very long string
// (quoted, joined, or out to the host) can exhaust the sandbox's heap for text the host would drop. A UTF-8 line
// has at least as many bytes as UTF-16 units, so a cut to more than the host's limit keeps the host's own cut of
// the line, and its overflow, as they were; cutting to at least 82 units keeps the inspector's layout (a line
// breaks once its items pass 72 units).
function keepFor(left) { return (left > 80 ? left : 80) + 2; }
function cut(s, keep) { return s.length > keep ? sliceStr(s, 0, keep) : s; }
function format(args, left) {
  let out = "";
  for (let i = 0; i < args.length; i++) {
    const v = args[i], t = typeof v;
    if (t === "string" ? i === 0 && apply(StrIndexOf, v, ["%"]) !== -1
      : !(t === "number" || t === "boolean" || t === "undefined" || v === null) || (v === 0 && 1 / v < 0)) {
      return lazy("inspect").format(args, left);
    }
    out += (i ? " " : "") + (t === "string" ? cut(v, keepFor(left)) : v);
  }
  return out;
}
// Lines wait in the log box (made by the host, no prototype, out of the program's reach) and leave in batches:
// the host takes them after every slice (takeCalls), or once the box holds its batch of lines (the host sets it:
// 1 while lines come slowly, up to ${LOG_BOX_LINES} while they come fast) or ${LOG_BOX_CHARS} characters, with one hostLog()
// that reads the box itself and answers how many bytes the record still keeps.
// Between takes logLeft goes down by each line's UTF-16 length, which is at most its UTF-8 byte count, and, like
// the host's own count, not below 1: only the host's answer (0) closes the log, so the prelude never stops or cuts
// sooner than the host would, and the host sees the line that overflows (its cut and the truncation marker).
let logLeft = 0, logBox, logCount = 0, logChars = 0;
function flushLogs() {
  if (logCount === 0) return;
  logLeft = hostLog();
  for (let i = 0; i < logCount; i++) logBox[i] = undefined;
  logCount = 0; logChars = 0;
}
const consoleObj = {};
for (const level of ["log", "info", "warn", "error", "debug"]) {
  const to = level === "debug" ? "log" : level, code = ${JSON.stringify(LOG_LEVEL_CHARS)}[to];
  define(consoleObj, level, { [to]: function () {
    if (logLeft <= 0) return;
    const text = cut(format(arguments, logLeft), keepFor(logLeft));
    logBox[logCount++] = text;
    logBox.levels += code;
    logLeft = logLeft > text.length + 1 ? logLeft - (text.length > 0 ? text.length : 1) : 1;
    logChars += text.length;
    if (logCount >= logBox.batch || logChars >= ${LOG_BOX_CHARS}) flushLogs();
  } }[to], true);
}
define(G, "console", consoleObj, false);
define(G, "text", function text(value) {
  const keep = keepFor(config.valueMax);
  hostOut("text", cut(typeof value === "string" ? value : format([value], config.valueMax), keep));
}, false);
define(G, "json", function json(value) {
  // A string longer than the output limit is too large as JSON too; the host says so without the copy.
  const s = typeof value === "string" && value.length > config.valueMax ? cut(value, keepFor(config.valueMax)) : JSONStringify(value);
  hostOut("json", s === undefined ? "null" : s);
}, false);

// apps and vault (filled in by configure).
const bindingSet = new MapCtor();
// Calls queued for the host's next take, and the settle functions of every call not yet settled, by slot. Both
// have no prototype, so plain assignments reach no setter a program put on Object or Array prototypes.
let outbox = ObjectCreate(null), outboxLength = 0, outboxChars = 0, nextSlot = 0;
const slots = ObjectCreate(null);
function queueCall(name, s) {
  const slot = nextSlot++, frame = name.length + ":" + name + s.length + ":" + s;
  outbox[outboxLength++] = frame;
  outboxChars += frame.length;
  return new PromiseCtor(function (resolve, reject) { slots[slot] = [resolve, reject]; });
}
// 0 when nothing is queued; the frames' length while it is over ${TAKE_SMALL_CHARS} and the host did not ask for them
// (large = 1), so the host checks its heap first; else the frames (never a numeric string: each has a ":").
function takeCalls(large) {
  if (logCount !== 0) flushLogs();
  if (outboxLength === 0) return 0;
  if (outboxChars > ${TAKE_SMALL_CHARS} && large !== 1) return outboxChars;
  let text = outbox[0];
  if (outboxLength > 1) { outbox.length = outboxLength; text = apply(ArrayJoin, outbox, [""]); }
  outbox = ObjectCreate(null); outboxLength = 0; outboxChars = 0;
  return text;
}
// The value is made here, so the call's own promise settles with it: no async function and no extra promise
// job per call. A result is JSON text, or a large result the host decoded already, boxed in { v } with a null
// prototype; a rejection's value is the host's error envelope. Whatever throws while making it rejects the call.
function settle(slot, which, value) {
  const entry = slots[slot];
  if (entry === undefined) return;
  delete slots[slot];
  let out;
  try {
    out = which === 1 ? lazy("appError")(value) : typeof value === "string" ? JSONParse(value) : value.v;
  } catch (e) {
    apply(entry[1], undefined, [e]);
    return;
  }
  apply(entry[which], undefined, [out]);
}
function argsText(name, args) {
  let s = "{}";
  if (args !== undefined) {
    s = JSONStringify(args);
    if (typeof s !== "string") throw new TypeErrorCtor("arguments of apps." + name + " are not JSON-compatible");
  }
  if (s.length > config.argsMax) {
    throw new RangeErrorCtor("arguments of apps." + name + " are too large (" + s.length + " characters, limit " + config.argsMax + ")");
  }
  return s;
}
// Like an async function: a bad argument (or a throwing toJSON) is a rejected promise, never a throw.
function invoke(name, args) {
  try { return queueCall(name, argsText(name, args)); } catch (e) { return apply(PromiseReject, PromiseCtor, [e]); }
}
const callFn = { call(name, args) {
  if (typeof name !== "string" || !apply(MapHas, bindingSet, [name])) {
    const shown = typeof name === "string" ? JSONStringify(sliceStr(name, 0, 200)) : typeof name;
    return apply(PromiseReject, PromiseCtor, [new TypeErrorCtor("apps.call: unknown binding " + shown)]);
  }
  return invoke(name, args);
} }.call;
function start(code) {
  return (async function () {
    let fn;
    try { fn = new AsyncFunction(code); } catch (e) { return "E" + lazy("inspect").describe(e, true); }
    let value, s;
    try { value = await apply(fn, undefined, []); } catch (e) { return "E" + lazy("inspect").describe(e, false); }
    try { s = JSONStringify(value); } catch (e) { return "E" + lazy("inspect").describe(e, false); }
    if (s === undefined) {
      // No value (undefined) is null; a function or symbol is a mistake worth naming (a binding returned uncalled).
      const t = typeof value;
      if (t === "function" || t === "symbol") {
        return "E" + lazy("inspect").describe(new TypeErrorCtor("the program returned a " + t + ", which is not JSON-compatible" + (t === "function" ? " (a function that was never called?)" : "")), false);
      }
      s = "null";
    }
    if (s.length > config.valueMax) return "T" + s.length;
    return "V" + s;
  })();
}

// Everything above is the same for every run and runs while a context is prepared, before any program.
// configure applies one run's host functions and settings (seed, time, limits, bindings, vault names) and
// returns bridge; the host calls it once, right before the program.
return function configure(logHost, outHost, loadHost, configJson, box) {
hostLog = logHost; hostOut = outHost; hostLoad = loadHost; logBox = box; logBox.levels = ""; logBox.batch = 1;
config = JSONParse(configJson);
ra = config.seed >>> 0; rb = (config.seed / 4294967296) >>> 0; rc = 0x9e3779b9; rd = 0x243f6a88;
for (let i = 0; i < 12; i++) sfc32();
fixedTime = config.time;
logLeft = config.logMax;
const apps = ObjectCreate(null);
define(apps, "call", callFn, false);
for (const name of config.bindings) {
  const dot = apply(StrIndexOf, name, ["."]);
  if (dot <= 0 || dot === name.length - 1) continue;
  const conn = sliceStr(name, 0, dot), cap = sliceStr(name, dot + 1);
  apply(MapSet, bindingSet, [name, true]);
  let holder = conn === "call" ? callFn : getOwnPropertyDescriptor(apps, conn);
  if (holder === undefined) { define(apps, conn, ObjectCreate(null), true); holder = apps[conn]; }
  else if (holder !== callFn) holder = holder.value;
  try { define(holder, cap, { [cap](args) { return invoke(name, args); } }[cap], true); } catch (e) {}
}
// Discovery from the run's own catalog (answered by the host, no App is called): see server/apps/discovery.ts.
define(apps, "$search", function $search(query, options) {
  const limit = options !== null && typeof options === "object" ? options.limit : undefined;
  return invoke("$search", { query: query, limit: limit });
}, false);
define(apps, "$describe", function $describe(binding) {
  if (typeof binding !== "string" || !apply(MapHas, bindingSet, [binding])) {
    const shown = typeof binding === "string" ? JSONStringify(sliceStr(binding, 0, 200)) : typeof binding;
    return apply(PromiseReject, PromiseCtor, [new TypeErrorCtor("apps.$describe: unknown binding " + shown)]);
  }
  return invoke("$describe", { binding: binding });
}, false);
for (const key of ownKeys(apps)) freeze(apps[key]);
freeze(apps);
const vault = ObjectCreate(null);
for (const name of config.vaultNames) {
  const slash = apply(StrIndexOf, name, ["/"]);
  const ref = "\u27E6vault:" + name + "\u27E7";
  if (slash < 0) { if (getOwnPropertyDescriptor(vault, name) === undefined) define(vault, name, ref, true); continue; }
  const group = sliceStr(name, 0, slash), key = sliceStr(name, slash + 1);
  let d = getOwnPropertyDescriptor(vault, group);
  if (d === undefined) { define(vault, group, ObjectCreate(null), true); d = getOwnPropertyDescriptor(vault, group); }
  if (typeof d.value === "object") define(d.value, key, ref, true);
}
for (const key of ownKeys(vault)) if (typeof vault[key] === "object") freeze(vault[key]);
freeze(vault);
define(G, "apps", apps, false);
define(G, "vault", vault, false);
let started = false;
return function bridge(op, slot, value) {
  if (op === ${BRIDGE.take}) return takeCalls(slot);
  if (op === ${BRIDGE.resolve}) return settle(slot, 0, value);
  if (op === ${BRIDGE.reject}) return settle(slot, 1, value);
  if (op === ${BRIDGE.start} && !started) { started = true; return start(value); }
};
};
})`;

/** Inspection for console and text(): Node-like, single line when short, depth 2, getters not run. */
const INSPECT_PART = part(
  [
    "apply",
    "define",
    "ownKeys",
    "getPrototypeOf",
    "getOwnPropertyDescriptor",
    "isArray",
    "StringCtor",
    "parseIntFn",
    "parseFloatFn",
    "JSONStringify",
    "ErrorProto",
    "ObjectProto",
    "PromiseProto",
    "DateProto",
    "DateGetTime",
    "DateToISO",
    "RegExpProto",
    "RegExpTest",
    "RegExpExec",
    "RegExpToString",
    "StrIndexOf",
    "StrSlice",
    "StrReplace",
    "cut",
    "keepFor",
    "SymbolToString",
    "FunctionToString",
    "MapProto",
    "MapForEach",
    "MapSize",
    "SetCtor",
    "SetProto",
    "SetAdd",
    "SetHas",
    "SetDelete",
    "SetForEach",
    "SetSize",
    "TypedArrayProto",
    "TypedArrayLength",
    "TypedArrayTag",
  ],
  String.raw`function sliceStr(s, a, b) { return apply(StrSlice, s, [a, b]); }
// Two tests without a repetition, so a very long key costs no backtracking state (one state per character is
// enough to exhaust the heap on a key of millions of characters).
const identStartRe = /^[A-Za-z_$]/, nonIdentRe = /[^A-Za-z0-9_$]/;
function isIdent(k) { return apply(RegExpTest, identStartRe, [k]) && !apply(RegExpTest, nonIdentRe, [k]); }
function quote(s) {
  return "'" + apply(StrReplace, s, [/[\\'\n\r\t]/g, function (c) {
    return c === "\n" ? "\\n" : c === "\r" ? "\\r" : c === "\t" ? "\\t" : "\\" + c;
  }]) + "'";
}
function isInstance(v, proto) {
  let p = v;
  for (let i = 0; i < 1000; i++) {
    p = getPrototypeOf(p);
    if (p === null) return false;
    if (p === proto) return true;
  }
  return false;
}
function fnName(f) {
  const d = getOwnPropertyDescriptor(f, "name");
  return d && typeof d.value === "string" ? d.value : "";
}
function join(open, items, close, indent) {
  if (items.length === 0) return open + close;
  let total = open.length, multiline = false;
  for (let i = 0; i < items.length; i++) {
    total += items[i].length + 2;
    if (apply(StrIndexOf, items[i], ["\n"]) !== -1) multiline = true;
  }
  if (!multiline && total <= 72) {
    let out = open + " ";
    for (let i = 0; i < items.length; i++) out += (i ? ", " : "") + items[i];
    return out + " " + close;
  }
  const pad2 = indent + "  ";
  let out = open + "\n";
  for (let i = 0; i < items.length; i++) out += pad2 + items[i] + (i < items.length - 1 ? ",\n" : "\n");
  return out + indent + close;
}
function inspect(v, depth, seen, indent, budget) {
  const t = typeof v;
  if (t === "string") return depth === 0 ? cut(v, budget.keep) : quote(cut(v, budget.keep));
  if (t === "number") return v === 0 && 1 / v < 0 ? "-0" : StringCtor(v);
  if (t === "bigint") return StringCtor(v) + "n";
  if (t === "symbol") return apply(SymbolToString, v, []);
  if (v === null || t === "undefined" || t === "boolean") return StringCtor(v);
  if (t === "function") {
    const name = fnName(v);
    let src = "";
    try { src = apply(FunctionToString, v, []); } catch (e) {}
    if (sliceStr(src, 0, 6) === "class ") return "[class " + (name || "(anonymous)") + "]";
    return name ? "[Function: " + name + "]" : "[Function (anonymous)]";
  }
  if (apply(SetHas, seen, [v])) return "[Circular]";
  apply(SetAdd, seen, [v]);
  try { return inspectObject(v, depth, seen, indent, budget); } finally { apply(SetDelete, seen, [v]); }
}
function inspectObject(v, depth, seen, indent, budget) {
  if (isInstance(v, ErrorProto)) {
    let name = "Error", message = "";
    const dn = getOwnPropertyDescriptor(v, "name") || getOwnPropertyDescriptor(getPrototypeOf(v), "name");
    if (dn && typeof dn.value === "string") name = dn.value;
    const dm = getOwnPropertyDescriptor(v, "message");
    if (dm && typeof dm.value === "string") message = dm.value;
    const text = message ? cut(name, budget.keep) + ": " + cut(message, budget.keep) : cut(name, budget.keep);
    return depth === 0 ? text : "[" + text + "]";
  }
  if (isInstance(v, DateProto)) {
    const tm = apply(DateGetTime, v, []);
    return tm === tm ? apply(DateToISO, v, []) : "Invalid Date";
  }
  if (isInstance(v, RegExpProto)) return apply(RegExpToString, v, []);
  const items = [];
  const next = seen;
  const inner = indent + "  ";
  let open, close = "}";
  if (isInstance(v, MapProto)) {
    if (depth > 2) return "[Map]";
    apply(MapForEach, v, [function (val, key) {
      if (items.length < 100 && budget.left > 0) {
        const s = inspect(key, depth + 1, next, inner, budget) + " => " + inspect(val, depth + 1, next, inner, budget);
        budget.left -= s.length;
        define(items, items.length, s, true);
      }
    }]);
    return join("Map(" + apply(MapSize, v, []) + ") {", items, "}", indent);
  }
  if (isInstance(v, SetProto)) {
    if (depth > 2) return "[Set]";
    apply(SetForEach, v, [function (val) {
      if (items.length < 100 && budget.left > 0) {
        const s = inspect(val, depth + 1, next, inner, budget);
        budget.left -= s.length;
        define(items, items.length, s, true);
      }
    }]);
    return join("Set(" + apply(SetSize, v, []) + ") {", items, "}", indent);
  }
  if (isInstance(v, TypedArrayProto)) {
    const n = apply(TypedArrayLength, v, []);
    for (let i = 0; i < n && i < 100; i++) define(items, items.length, inspect(v[i], depth + 1, next, inner, budget), true);
    if (n > 100) define(items, items.length, "... " + (n - 100) + " more items", true);
    return join(apply(TypedArrayTag, v, []) + "(" + n + ") [", items, "]", indent);
  }
  if (isInstance(v, PromiseProto)) return "Promise {}";
  const arr = isArray(v);
  if (depth > 2) return arr ? "[Array]" : "[Object]";
  const keys = ownKeys(v);
  let shown = 0;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    if (arr && k === "length") continue;
    const d = getOwnPropertyDescriptor(v, k);
    if (!d || !d.enumerable) continue;
    if (shown >= 100 || budget.left <= 0) { define(items, items.length, "... more items", true); break; }
    shown++;
    let val;
    if ("value" in d) val = inspect(d.value, depth + 1, next, inner, budget);
    else val = d.get && d.set ? "[Getter/Setter]" : d.get ? "[Getter]" : "[Setter]";
    let s;
    if (arr && typeof k === "string" && apply(RegExpTest, /^(0|[1-9][0-9]*)$/, [k])) s = val;
    else {
      const label = typeof k === "symbol" ? "[" + apply(SymbolToString, k, []) + "]" : isIdent(k) ? cut(k, budget.keep) : quote(cut(k, budget.keep));
      s = label + ": " + val;
    }
    budget.left -= s.length;
    define(items, items.length, s, true);
  }
  if (arr) return join("[", items, "]", indent);
  const proto = getPrototypeOf(v);
  open = "{";
  if (proto === null) open = "[Object: null prototype] {";
  else if (proto !== ObjectProto) {
    const cd = getOwnPropertyDescriptor(proto, "constructor");
    const name = cd && typeof cd.value === "function" ? fnName(cd.value) : "";
    if (name && name !== "Object") open = name + " {";
  }
  return join(open, items, close, indent);
}
function format(args, left) {
  const budget = { left: left, keep: keepFor(left) };
  let out = "", start = 0;
  if (args.length > 0 && typeof args[0] === "string" && apply(StrIndexOf, args[0], ["%"]) !== -1) {
    const f = cut(args[0], budget.keep);
    let a = 1, i = 0, last = 0;
    out = "";
    while (i < f.length - 1) {
      if (f[i] === "%") {
        const c = f[i + 1];
        let rep = null;
        if (c === "%") rep = "%";
        else if (a < args.length) {
          const v = args[a];
          if (c === "s") rep = typeof v === "string" ? cut(v, budget.keep) : inspect(v, 1, new SetCtor(), "", budget);
          else if (c === "d" || c === "i") rep = typeof v === "bigint" ? StringCtor(v) + "n" : StringCtor(c === "i" ? parseIntFn(v) : +v);
          else if (c === "f") rep = StringCtor(parseFloatFn(v));
          else if (c === "j") { try { rep = StringCtor(JSONStringify(v)); } catch (e) { rep = "[Circular]"; } }
          else if (c === "o" || c === "O" || c === "c") rep = c === "c" ? "" : inspect(v, 1, new SetCtor(), "", budget);
          if (rep !== null && c !== "%") a++;
        }
        if (rep !== null) { out += sliceStr(f, last, i) + rep; i += 2; last = i; continue; }
      }
      i++;
    }
    out += sliceStr(f, last);
    start = a;
    for (let j = start; j < args.length; j++) out += " " + inspect(args[j], 0, new SetCtor(), "", budget);
    return out;
  }
  for (let j = 0; j < args.length; j++) out += (j ? " " : "") + inspect(args[j], 0, new SetCtor(), "", budget);
  return out;
}
// How the host is told about an uncaught error; compile errors get the program's line and column.
function describe(e, compile) {
  try {
    if (e !== null && (typeof e === "object" || typeof e === "function") && isInstance(e, ErrorProto)) {
      let name = "Error", message = "";
      try { name = StringCtor(e.name); } catch (x) {}
      try { message = StringCtor(e.message); } catch (x) {}
      name = cut(name, 4002);
      message = cut(message, 4002);
      let text = message ? name + ": " + message : name;
      if (compile && typeof e.lineNumber === "number") {
        const m = apply(RegExpExec, /<input>:(\d+):(\d+)/, [StringCtor(e.stack)]);
        text += " (line " + (e.lineNumber - 2) + (m ? ", column " + m[2] : "") + ")";
      }
      return sliceStr(text, 0, 4000);
    }
    return sliceStr("Uncaught " + inspect(e, 1, new SetCtor(), "", { left: 4000, keep: keepFor(4000) }), 0, 4000);
  } catch (x) {
    return "Error: the program threw a value that cannot be described";
  }
}
return { __proto__: null, format: format, describe: describe };`,
);

/**
 * Date strings (every local-time view is UTC) and parsing: a string without a zone is read as UTC whatever its
 * form, as it would be on a host whose time zone is UTC. QuickJS reads ISO date-times without a zone and every
 * other form (\`"2026-10-23 09:30"\`, \`"Oct 23, 2026"\`, \`"2026/10/23"\`) in the host's own time zone, which the
 * page (the person's zone) and the server (often UTC) do not share: such a string is read by QuickJS, then moved
 * back by the host's offset that QuickJS applied. A string naming a zone (Z, GMT, UTC, UT, the US and European
 * abbreviations QuickJS knows, or an offset after the time) is left as QuickJS reads it.
 */
const DATE_PART = part(
  ["apply", "StringCtor", "OrigDate", "DateParse", "DateGetTime", "DateHostOffset", "RegExpTest", "utc"],
  String.raw`const isoLocal = /^(\d{4}|[+-]\d{6})-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?$/;
const isoDate = /^(\d{4}|[+-]\d{6})(-\d{2}(-\d{2})?)?$/;
const zoned = /(^|[^A-Za-z])(GMT|UTC|UT|Z|[ECMP][DS]T|WES?T|CES?T|EES?T)($|[^A-Za-z])|\d:\d\d(:\d\d(\.\d+)?)?\s*([AaPp][Mm])?\s*[+-]\d\d:?\d\d/i;
function parseUTC(s) {
  s = StringCtor(s);
  if (apply(RegExpTest, isoLocal, [s])) return apply(DateParse, OrigDate, [s + "Z"]);
  const t = apply(DateParse, OrigDate, [s]);
  if (t !== t || apply(RegExpTest, isoDate, [s]) || apply(RegExpTest, zoned, [s])) return t;
  // QuickJS made t = F + offset(F) from the fields F read as UTC; F is found from the offset near t, then at F's
  // own estimate (which is exact in the hour a clock change skips or repeats too).
  const guess = t - apply(DateHostOffset, new OrigDate(t), []) * 60000;
  return t - apply(DateHostOffset, new OrigDate(guess), []) * 60000;
}
const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
function pad(n, w) { let s = StringCtor(n); while (s.length < w) s = "0" + s; return s; }
function parts(d) {
  const t = apply(DateGetTime, d, []);
  if (t !== t) return null;
  const u = new OrigDate(t);
  return {
    y: apply(utc.FullYear, u, []), mo: apply(utc.Month, u, []), d: apply(utc.Date, u, []), wd: apply(utc.Day, u, []),
    h: apply(utc.Hours, u, []), mi: apply(utc.Minutes, u, []), s: apply(utc.Seconds, u, []),
  };
}
function yearStr(y) { return y < 0 ? "-" + pad(-y, 6) : pad(y, 4); }
function dateStr(p) { return DAYS[p.wd] + " " + MONTHS[p.mo] + " " + pad(p.d, 2) + " " + yearStr(p.y); }
function timeStr(p) { return pad(p.h, 2) + ":" + pad(p.mi, 2) + ":" + pad(p.s, 2) + " GMT+0000"; }
function localeDate(p) { return pad(p.mo + 1, 2) + "/" + pad(p.d, 2) + "/" + yearStr(p.y); }
function localeTime(p) {
  const h12 = p.h % 12 === 0 ? 12 : p.h % 12;
  return pad(h12, 2) + ":" + pad(p.mi, 2) + ":" + pad(p.s, 2) + (p.h < 12 ? " AM" : " PM");
}
const formats = {
  __proto__: null,
  toString: function (p) { return dateStr(p) + " " + timeStr(p); },
  toDateString: dateStr,
  toTimeString: timeStr,
  toLocaleString: function (p) { return localeDate(p) + ", " + localeTime(p); },
  toLocaleDateString: localeDate,
  toLocaleTimeString: localeTime,
};
function format(name, d) {
  const p = parts(d);
  return p === null ? "Invalid Date" : formats[name](p);
}
return { __proto__: null, parseUTC: parseUTC, format: format };`,
);

/** The error a failed app call rejects with, from the host's JSON envelope. */
const APP_ERROR_PART = part(
  ["define", "StringCtor", "JSONParse", "ErrorCtor", "TypeErrorCtor", "RangeErrorCtor"],
  `return function appError(envelope) {
  let o;
  try { o = JSONParse(envelope); } catch (e) { o = null; }
  if (o === null || typeof o !== "object") o = { name: "AppCallFailed", message: "call failed", details: {} };
  const Ctor = o.name === "TypeError" ? TypeErrorCtor : o.name === "RangeError" ? RangeErrorCtor : ErrorCtor;
  const e = new Ctor(StringCtor(o.message));
  if (Ctor === ErrorCtor) define(e, "name", StringCtor(o.name), false);
  if (o.details !== undefined) define(e, "details", o.details, true);
  return e;
};`,
);

/** Sources of the lazily compiled parts, each a function expression taking `K`. */
export const PRELUDE_PARTS: Readonly<Record<PreludePart, string>> = {
  inspect: INSPECT_PART,
  date: DATE_PART,
  appError: APP_ERROR_PART,
};

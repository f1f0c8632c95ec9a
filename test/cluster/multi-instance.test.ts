/**
 * Two built servers (`scripts/server.mjs`) on one Postgres behind a tiny loopback proxy: events,
 * cancel, connection edits, policies, decisions and jobs work across instances, and `kill -9` of the
 * instance hosting a run leaves the other to finish it through replay with no write sent twice.
 * Needs OPENBOT_TEST_DATABASE_URL and a built app (`npx next build`); skipped with a note otherwise.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, rmSync } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const baseUrl = process.env.OPENBOT_TEST_DATABASE_URL;
const built = existsSync(path.join(process.cwd(), ".next", "BUILD_ID"));
const why = !baseUrl ? "OPENBOT_TEST_DATABASE_URL is not set" : !built ? "the app is not built (npx next build)" : "";
if (why) console.warn(`multi-instance tests skipped: ${why}`);

const PORTS = { proxy: 5300, a: 5301, b: 5302 };
const TOKEN = `obt_${randomBytes(24).toString("hex")}`;
const KEY = randomBytes(32).toString("hex");
const auth = { Authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };

interface Instance {
  name: string;
  port: number;
  child: ChildProcess;
  log: () => string;
}

let dbUrl = "";
let dbName = "";
let db: pg.Client;
const instances: Record<"a" | "b", Instance | undefined> = { a: undefined, b: undefined };
let proxy: Server | undefined;

async function startInstance(name: "a" | "b"): Promise<Instance> {
  const port = PORTS[name];
  const dataDir = path.join(process.cwd(), "test-results", `cluster-${name}`);
  rmSync(dataDir, { recursive: true, force: true });
  const child = spawn(process.execPath, ["scripts/server.mjs"], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      OPENBOT_DATA_DIR: dataDir,
      DATABASE_URL: dbUrl,
      OPENBOT_ADMIN_TOKEN: TOKEN,
      OPENBOT_ENCRYPTION_KEY: KEY,
      OPENBOT_LOG: "",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout!.on("data", (d) => (log += d));
  child.stderr!.on("data", (d) => (log += d));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`instance ${name} exited:\n${log}`);
    const up = await fetch(`http://127.0.0.1:${port}/v1/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    await sleep(200);
  }
  return { name, port, child, log: () => log };
}

/** Round-robin over the live instances, as a load balancer would. */
function startProxy(): Promise<Server> {
  let next = 0;
  const server = createServer((req, res) => {
    const live = Object.values(instances).filter(
      (i): i is Instance => !!i && i.child.exitCode === null && !i.child.signalCode,
    );
    const target = live[next++ % live.length]!;
    const out = httpRequest(
      { host: "127.0.0.1", port: target.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on("error", () => res.writeHead(502).end());
    req.pipe(out);
  });
  return new Promise((resolve) => server.listen(PORTS.proxy, "127.0.0.1", () => resolve(server)));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const at = (name: "a" | "b" | "proxy") => `http://127.0.0.1:${name === "proxy" ? PORTS.proxy : instances[name]!.port}`;

interface Rec {
  id: string;
  status: string;
  result?: unknown;
}

async function api<T = Rec>(where: "a" | "b" | "proxy", method: string, route: string, body?: unknown): Promise<T> {
  const r = await fetch(`${at(where)}${route}`, {
    method,
    headers: auth,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${route} on ${where}: ${r.status} ${text}`);
  return text ? JSON.parse(text) : (undefined as T);
}

async function until<T>(what: string, probe: () => Promise<T | undefined | null | false>, ms = 90_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await sleep(100);
  }
}

async function newChat(where: "a" | "b" | "proxy"): Promise<string> {
  return (await api<{ id: string }>(where, "POST", "/v1/chats", {})).id;
}

const emailsWithSubject = async (subject: string) =>
  Number((await db.query("select count(*)::int as n from emails where subject = $1", [subject])).rows[0].n);

async function emailConnectionId(where: "a" | "b"): Promise<string> {
  const list = await api<{ id: string; transport: { app?: string } }[]>(where, "GET", "/v1/connections");
  const conn = list.find((c) => c.transport.app === "email");
  if (!conn) throw new Error(`no email connection in ${JSON.stringify(list)}`);
  return conn.id;
}

async function updateSettings(codeMode: Record<string, unknown>) {
  const s = await api<{ version: number }>("a", "GET", "/v1/platform/settings");
  await api("a", "PATCH", "/v1/platform/settings", { expectedVersion: s.version, codeMode });
}

describe.skipIf(!!why)("many instances on one Postgres", () => {
  beforeAll(async () => {
    dbName = `openbot_cluster_${randomBytes(5).toString("hex")}`;
    const admin = new pg.Client({ connectionString: baseUrl });
    await admin.connect();
    await admin.query(`create database ${dbName}`);
    await admin.end();
    const url = new URL(baseUrl!);
    url.pathname = `/${dbName}`;
    dbUrl = url.toString();
    instances.a = await startInstance("a");
    instances.b = await startInstance("b");
    proxy = await startProxy();
    db = new pg.Client({ connectionString: dbUrl });
    await db.connect();
    await updateSettings({ enabled: true, timeoutMs: 60_000 });
  }, 240_000);

  afterAll(async () => {
    proxy?.close();
    for (const i of Object.values(instances)) {
      if (i && i.child.exitCode === null && !i.child.signalCode) {
        const exited = new Promise((r) => i.child.once("exit", r));
        i.child.kill("SIGTERM");
        await exited;
      }
    }
    await db?.end();
    if (dbName) {
      const admin = new pg.Client({ connectionString: baseUrl });
      await admin.connect();
      await admin.query(`drop database if exists ${dbName} with (force)`).catch(() => undefined);
      await admin.end();
    }
  }, 60_000);

  it("a policy set to deny on A is enforced on B at once", async () => {
    const conn = await emailConnectionId("a");
    await api("a", "PATCH", `/v1/connections/${conn}/policies`, { "send-email": "deny" });
    const chat = await newChat("b");
    const record = await api("b", "POST", `/v1/chats/${chat}/code-runs`, {
      code: `if (typeof apps.email.send_email !== "function") return "absent"; await apps.email.send_email({ to: "x@example.com", subject: "denied", body: "-" }); return "sent"`,
    });
    // A denied tool is absent from B's catalog at once (and a call by its name would be refused as unknown).
    expect(record.result).toMatchObject({ _tag: "Completed", value: "absent" });
    expect(await emailsWithSubject("denied")).toBe(0);
    await api("a", "PATCH", `/v1/connections/${conn}/policies`, { "send-email": null });
  });

  it("a connection added on A is callable on B within 2 s", async () => {
    await api("a", "POST", "/v1/connections", { name: "Notes Two", transport: { type: "builtin", app: "notes" } });
    const started = Date.now();
    await until("the connection on B", async () => {
      const list = await api<{ name: string; status: string }[]>("b", "GET", "/v1/connections");
      return list.find((c) => c.name === "Notes Two" && c.status === "connected");
    });
    const elapsed = Date.now() - started;
    const chat = await newChat("b");
    const record = await api("b", "POST", `/v1/chats/${chat}/code-runs`, {
      code: `const r = await apps.notes_two.list_notes({}); return Array.isArray(r.structuredContent?.notes ?? r.content)`,
    });
    expect(record.result).toMatchObject({ _tag: "Completed", value: true });
    expect(elapsed, `B saw the new connection after ${elapsed} ms`).toBeLessThan(2_000);
  });

  it("a run started on A and decided on B completes once", async () => {
    const chat = await newChat("a");
    const subject = `decided-${randomBytes(4).toString("hex")}`;
    const waiting = await api("a", "POST", `/v1/chats/${chat}/code-runs`, {
      code: `await apps.email.send_email({ to: "t@example.com", subject: "${subject}", body: "b" }); return "ok"`,
    });
    expect(waiting.status).toBe("Waiting");
    const [decision] = await api<{ id: string }[]>("b", "GET", `/v1/decisions?status=pending&chatId=${chat}`);
    await api("b", "POST", `/v1/decisions/${decision!.id}`, { decision: "allow" });
    const done = await until("the decided run", async () => {
      const r = await api("proxy", "GET", `/v1/code-runs/${waiting.id}`);
      return r.status === "Completed" ? r : undefined;
    });
    expect(done.result).toMatchObject({ _tag: "Completed", value: "ok" });
    await sleep(1_000);
    expect(await emailsWithSubject(subject)).toBe(1);
    expect(Number((await db.query("select count(*)::int as n from jobs where kind = 'resume-run'")).rows[0].n)).toBe(0);
  });

  it("a chat page on A sees live logs of a run hosted on B", async () => {
    const chat = await newChat("a");
    const controller = new AbortController();
    const input = encodeURIComponent(JSON.stringify({ chatId: chat }));
    const stream = await fetch(`${at("a")}/api/trpc/codeRuns.onLog?input=${input}`, {
      headers: { Authorization: auth.Authorization, Accept: "text/event-stream" },
      signal: controller.signal,
    });
    expect(stream.status).toBe(200);
    const seen = (async () => {
      const reader = stream.body!.getReader();
      let text = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return text;
        text += new TextDecoder().decode(value);
        if (text.includes("line-from-b-3")) return text;
      }
    })();
    await sleep(500);
    const record = await api("b", "POST", `/v1/chats/${chat}/code-runs`, {
      code: `for (let i = 0; i < 4; i++) { console.log("line-from-b-" + i); let x = 0; for (let j = 0; j < 2e6; j++) x += j }\nreturn 1`,
    });
    expect(record.status).toBe("Completed");
    const text = await Promise.race([seen, sleep(30_000).then(() => "timed out")]);
    controller.abort();
    for (let i = 0; i < 4; i++) expect(text).toContain(`line-from-b-${i}`);
  });

  it("cancel on B stops a busy run on A within 2 s", async () => {
    await updateSettings({ maxServerRuns: 1 });
    try {
      const chat = await newChat("a");
      const busy = fetch(`${at("a")}/v1/chats/${chat}/code-runs`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ code: "while (true) {}" }),
      }).then((r) => r.json());
      const run = await until("the busy run", async () => {
        const list = await api<{ id: string; status: string }[]>("a", "GET", `/v1/chats/${chat}/code-runs`);
        return list.find((r) => r.status === "Running");
      });
      const started = Date.now();
      await api("b", "POST", `/v1/code-runs/${run.id}/cancel`);
      // A runs one server run at a time now: the next one runs only once A has stopped the busy one.
      const next = await api("a", "POST", `/v1/chats/${chat}/code-runs`, { code: "return 2" });
      const elapsed = Date.now() - started;
      expect(next.result).toMatchObject({ _tag: "Completed", value: 2 });
      expect((await busy).status).toBe("Cancelled");
      expect(elapsed, `A stopped the program ${elapsed} ms after the cancel on B`).toBeLessThan(2_000);
    } finally {
      await updateSettings({ maxServerRuns: 4 });
    }
  });

  it("kill -9 of the instance running a re-run: the other finishes it through replay, the write is sent once, and the job survives", async () => {
    const chat = await newChat("a");
    const subject = `crash-${randomBytes(4).toString("hex")}`;
    const waiting = await api("a", "POST", `/v1/chats/${chat}/code-runs`, {
      code: `await apps.email.send_email({ to: "t@example.com", subject: "${subject}", body: "b" })
let x = 0
for (let j = 0; j < 4e7; j++) x += j
return "survived"`,
    });
    expect(waiting.status).toBe("Waiting");
    const [decision] = await api<{ id: string }[]>("b", "GET", `/v1/decisions?status=pending&chatId=${chat}`);
    await api("b", "POST", `/v1/decisions/${decision!.id}`, { decision: "allow" });
    // The re-run is a job: wait until an instance holds it and the email's outcome is recorded.
    const holder = await until("a taken job with the write recorded", async () => {
      const job = (
        await db.query(
          `select j.id, j.locked_by, i.pid from jobs j join instances i on i.id = j.locked_by
           where j.kind = 'resume-run' and j.payload like $1`,
          [`%${waiting.id}%`],
        )
      ).rows[0] as { id: string; locked_by: string; pid: number } | undefined;
      const recorded = (
        await db.query("select 1 from code_run_calls where run_id = $1 and idx = 0 and outcome_enc is not null", [
          waiting.id,
        ])
      ).rows.length;
      return job && recorded ? job : undefined;
    });
    const victim = Object.entries(instances).find(([, i]) => i?.child.pid === holder.pid);
    expect(victim, `the job's holder pid ${holder.pid} is one of the instances`).toBeDefined();
    const status = (await db.query("select status from code_runs where id = $1", [waiting.id])).rows[0].status;
    expect(status).toBe("Running");
    const killedAt = Date.now();
    victim![1]!.child.kill("SIGKILL");
    await new Promise((r) => victim![1]!.child.once("exit", r));
    const survivor = victim![0] === "a" ? "b" : "a";
    const done = await until("the run finished by the survivor", async () => {
      const r = await api(survivor, "GET", `/v1/code-runs/${waiting.id}`);
      return r.status !== "Running" && r.status !== "Queued" ? r : undefined;
    });
    const elapsed = Date.now() - killedAt;
    expect(done.result).toMatchObject({ _tag: "Completed", value: "survived" });
    expect(await emailsWithSubject(subject)).toBe(1);
    const row = (await db.query("select host_instance, attempt from code_runs where id = $1", [waiting.id])).rows[0];
    expect(row.host_instance).not.toBe(holder.locked_by);
    // The job the dead instance held is taken again and finished, not lost.
    await until("the dead instance's job done", async () => {
      const left = await db.query("select 1 from jobs where id = $1", [holder.id]);
      return left.rows.length === 0;
    });
    expect(elapsed, `taken over ${elapsed} ms after the kill`).toBeLessThan(30_000 + 10_000);
  });
});

/**
 * Two built servers (`scripts/server.mjs`) on one Postgres behind a tiny loopback proxy: events,
 * cancel, connection edits, policies, decisions and jobs work across instances, and `kill -9` of the
 * instance hosting a run leaves the other to finish it through replay with no write sent twice.
 * Needs OPENBOT_TEST_DATABASE_URL and a built app (`npx next build`); skipped with a note otherwise.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OtlpReceiver, startOtlpReceiver } from "../helpers/otlp-receiver";
import { type Cluster, PORT_BASE, type Rec, skipReason, sleep, startCluster, until } from "./harness";

const why = skipReason;
if (why) console.warn(`multi-instance tests skipped: ${why}`);

let cluster: Cluster;
let receiver: OtlpReceiver;
const api = <T = Rec>(where: "a" | "b" | "proxy", method: string, route: string, body?: unknown) =>
  cluster.api<T>(where, method, route, body);
const at = (where: "a" | "b" | "proxy") => cluster.at(where);
const db = { query: (sql: string, params?: unknown[]) => cluster.db().query(sql, params) };

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
    // The instances export their traces to this receiver (issue 15 item 7, on the built server).
    receiver = await startOtlpReceiver(PORT_BASE + 9);
    cluster = await startCluster(0, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "200" });
    await updateSettings({ enabled: true, timeoutMs: 60_000 });
  }, 240_000);

  afterAll(async () => {
    await cluster?.close();
    await receiver?.close();
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
    // One trace for the run across both instances: the root recorded by the instance that ended it, the
    // attempt on A (ended waiting) and the re-run, and the one email call sent, all under the root.
    const root = await until("the run's root span", async () =>
      receiver.spans.find((x) => x.name === "code_run" && x.attributes["openbot.run.id"] === waiting.id),
    );
    const stored = (await db.query("select traceparent from code_runs where id = $1", [waiting.id])).rows[0];
    expect(stored.traceparent).toBe(`00-${root.traceId}-${root.spanId}-01`);
    const attempts = await until("both attempts' spans", async () => {
      const found = receiver.spans.filter(
        (x) => x.name === "run_attempt" && x.attributes["openbot.run.id"] === waiting.id,
      );
      return found.length === 2 ? found : undefined;
    });
    expect(attempts.map((x) => x.attributes["openbot.attempt.outcome"]).sort()).toEqual(["completed", "waiting"]);
    const calls = receiver.spans.filter((x) => x.name === "app_call email.send_email" && x.traceId === root.traceId);
    expect(calls).toHaveLength(1);
    for (const x of [...attempts, ...calls]) expect([x.traceId, x.parentSpanId]).toEqual([root.traceId, root.spanId]);
    expect(Buffer.concat(receiver.raw).toString("utf8")).not.toContain(subject);
  });

  it("a chat page on A sees live logs of a run hosted on B", async () => {
    const chat = await newChat("a");
    const controller = new AbortController();
    const input = encodeURIComponent(JSON.stringify({ chatId: chat }));
    const stream = await fetch(`${at("a")}/api/trpc/codeRuns.onLog?input=${input}`, {
      headers: { Authorization: cluster.auth.Authorization, Accept: "text/event-stream" },
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
        headers: cluster.auth,
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

  it("caps raised on A admit a run queued on B at once, while B's first run still runs", async () => {
    await updateSettings({ maxServerRuns: 1 });
    try {
      const chat = await newChat("b");
      const post = (code: string) =>
        fetch(`${at("b")}/v1/chats/${chat}/code-runs`, {
          method: "POST",
          headers: cluster.auth,
          body: JSON.stringify({ code }),
        }).then((r) => r.json() as Promise<Rec>);
      const busy = post("while (true) {}");
      await until("the busy run on B", async () => {
        const list = await api<{ status: string }[]>("b", "GET", `/v1/chats/${chat}/code-runs`);
        return list.some((r) => r.status === "Running") || undefined;
      });
      const second = post("return 2");
      await until("the second run queued on B", async () => {
        const list = await api<{ status: string }[]>("b", "GET", `/v1/chats/${chat}/code-runs`);
        return list.some((r) => r.status === "Queued") || undefined;
      });
      await updateSettings({ maxServerRuns: 4 });
      const done = await Promise.race([second, sleep(5_000).then(() => undefined)]);
      expect(done, "the queued run on B did not start after the caps were raised on A").toMatchObject({
        result: { _tag: "Completed", value: 2 },
      });
      const running = await api<{ id: string; status: string }[]>("b", "GET", `/v1/chats/${chat}/code-runs`);
      const first = running.find((r) => r.status === "Running");
      expect(first).toBeDefined();
      await api("a", "POST", `/v1/code-runs/${first!.id}/cancel`);
      expect((await busy).status).toBe("Cancelled");
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
    const victim = Object.entries(cluster.instances).find(([, i]) => i?.child.pid === holder.pid);
    expect(victim, `the job's holder pid ${holder.pid} is one of the instances`).toBeDefined();
    const status = (await db.query("select status from code_runs where id = $1", [waiting.id])).rows[0].status;
    expect(status).toBe("Running");
    const killedAt = Date.now();
    victim![1]!.child.kill("SIGKILL");
    await new Promise((r) => victim![1]!.child.once("exit", r));
    const survivor = victim![0] === "a" ? "b" : "a";
    // Takeover (another instance claims the run: a new attempt it hosts) within 30 s of the host's death:
    // the lease (10 s, renewed every 2 s) ends, then the sweep (every 5 s, a job polled every second) claims it.
    const leaseEnd = Number(
      (await db.query("select lease_until from instances where id = $1", [holder.locked_by])).rows[0].lease_until,
    );
    const taken = await until("the run taken over", async () => {
      const r = (await db.query("select host_instance, attempt from code_runs where id = $1", [waiting.id])).rows[0];
      return r.host_instance !== holder.locked_by ? { ...r, at: Date.now() } : undefined;
    });
    const takeover = taken.at - killedAt;
    console.log(
      `takeover: lease ended ${leaseEnd - killedAt} ms after the kill, run claimed (attempt ${taken.attempt}) ${takeover} ms after it`,
    );
    expect(takeover, `taken over ${takeover} ms after the kill`).toBeLessThan(30_000);
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
    expect(elapsed, `finished ${elapsed} ms after the kill`).toBeLessThan(30_000 + 10_000);
    // Room for the bounds asserted above (takeover 30 s, finish 40 s after the kill) on a slow machine: with
    // the default 30 s, a slow takeover was cut off before its figure could be reported.
  }, 120_000);
});

/**
 * A Postgres restart mid-load loses nothing and answers no bare 500 (issue 15, Done when): two built
 * instances behind the proxy, 20 API runs each sending 3 emails through the built-in App, and a real
 * restart of Postgres (the command in OPENBOT_TEST_PG_RESTART; .ci/run sets it) while they run. Every
 * POST answers a run (2xx) or a 503 naming the run or saying none was made; every run ends (Completed,
 * Failed with a reason, or waiting for a person on a write whose outcome is Unknown); no email is sent twice and none is missing for a Completed run; no instance
 * logs an uncaught exception. Then, with Postgres stopped (OPENBOT_TEST_PG_STOP / _START), REST and tRPC
 * requests answer 503 saying what was not done, and the instances serve again once it is back.
 * Runs in its own vitest invocation: nothing else may use Postgres meanwhile.
 */
import { execSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cluster, skipReason, sleep, startCluster, until } from "./harness";

const restart = process.env.OPENBOT_TEST_PG_RESTART;
const why =
  skipReason || (!restart ? "OPENBOT_TEST_PG_RESTART (a command that restarts the test Postgres) is not set" : "");
if (why) console.warn(`Postgres restart test skipped: ${why}`);
const stop = process.env.OPENBOT_TEST_PG_STOP;
const start = process.env.OPENBOT_TEST_PG_START;
const whyNotDown = why || (!stop || !start ? "OPENBOT_TEST_PG_STOP and OPENBOT_TEST_PG_START are not set" : "");
if (whyNotDown && !why) console.warn(`Postgres outage test skipped: ${whyNotDown}`);

const RUNS = 20;
const EMAILS = 3;
let cluster: Cluster;

describe.skipIf(!!why)("a Postgres restart mid-load", () => {
  beforeAll(async () => {
    cluster = await startCluster(5);
    const s = await cluster.api<{ version: number }>("a", "GET", "/v1/platform/settings");
    await cluster.api("a", "PATCH", "/v1/platform/settings", {
      expectedVersion: s.version,
      codeMode: {
        enabled: true,
        timeoutMs: 60_000,
        maxServerRuns: 8,
        maxServerRunsPerUser: 8,
        maxQueuedRunsPerUser: 64,
      },
    });
    const list = await cluster.api<{ id: string; transport: { app?: string } }[]>("a", "GET", "/v1/connections");
    const email = list.find((c) => c.transport.app === "email")!;
    await cluster.api("a", "PATCH", `/v1/connections/${email.id}/policies`, { "send-email": "allow" });
  }, 240_000);

  afterAll(async () => {
    await cluster?.close();
  }, 60_000);

  it("every POST answers a run or a 503 that says so, every run ends, no email is sent twice or lost", async () => {
    const tag = `pgr${randomBytes(3).toString("hex")}`;
    const chats: string[] = [];
    for (let i = 0; i < RUNS; i++) chats.push((await cluster.api<{ id: string }>("proxy", "POST", "/v1/chats", {})).id);
    const code = (i: number) => `for (let k = 0; k < ${EMAILS}; k++) {
  await apps.email.send_email({ to: "t@example.com", subject: "${tag}-${i}-" + k, body: "b" })
  let x = 0
  for (let j = 0; j < 3e6; j++) x += j
}
return "sent"`;
    const posts = chats.map((chat, i) =>
      fetch(`${cluster.at("proxy")}/v1/chats/${chat}/code-runs`, {
        method: "POST",
        headers: cluster.auth,
        body: JSON.stringify({ code: code(i) }),
      }).then(async (r) => ({ status: r.status, text: await r.text() })),
    );
    // Restart once the runs are under way (some emails sent, not all).
    await until(
      "runs under way",
      async () =>
        Number(
          (await cluster.db().query("select count(*)::int as n from emails where subject like $1", [`${tag}-%`]))
            .rows[0].n,
        ) >= 3,
    );
    execSync(restart!, { stdio: "inherit", timeout: 60_000 });
    await cluster.reconnectDb();
    const answers = await Promise.all(posts);

    const runIds = new Set<string>();
    for (const a of answers) {
      // A bare 500 names its error id; the instances' log lines of that id say which error it was.
      const errorId = /err_[0-9a-f-]+/.exec(a.text)?.[0];
      const logged = errorId
        ? Object.values(cluster.instances)
            .flatMap((i) => i!.log().split("\n"))
            .filter((line) => line.includes(errorId))
        : [];
      expect(a.status, `a POST answered ${a.status} ${a.text}\n${logged.join("\n")}`).not.toBe(500);
      const body = JSON.parse(a.text) as {
        id?: string;
        error?: { code: string; message: string; details?: { runId?: string } };
      };
      if (a.status >= 200 && a.status < 300) {
        expect(body.id).toMatch(/^run_/);
        runIds.add(body.id!);
      } else {
        expect(a.status, a.text).toBe(503);
        const runId = body.error?.details?.runId;
        if (runId) runIds.add(runId);
        else expect(body.error?.message, a.text).toMatch(/no run was (made|started)|request was not carried out/i);
      }
    }

    // Every run of these chats ends: none stays Running or Queued.
    const stuck = async () =>
      (
        await cluster
          .db()
          .query(
            "select id, status, attempt, host, host_instance, claimed_at, updated_at from code_runs where chat_id = any($1) and status in ('Running', 'Queued')",
            [chats],
          )
      ).rows;
    const rows = await until(
      "every run ended",
      async () => {
        const r = (
          await cluster
            .db()
            .query<{ id: string; status: string; chat_id: string }>(
              "select id, status, chat_id from code_runs where chat_id = any($1)",
              [chats],
            )
        ).rows;
        return r.every((x) => x.status !== "Running" && x.status !== "Queued") ? r : undefined;
      },
      90_000,
    ).catch(async (error: Error) => {
      const left = await stuck();
      const instances = (await cluster.db().query("select id, pid, lease_until from instances")).rows;
      const logs = Object.values(cluster.instances).map((i) => `--- ${i!.name}\n${i!.log().slice(-6_000)}`);
      throw new Error(`${error.message}: ${JSON.stringify({ left, instances, answers })}\n${logs.join("\n")}`);
    });
    for (const id of runIds) expect(rows.map((r) => r.id)).toContain(id);
    const byChat = new Map(chats.map((c, i) => [c, i]));
    for (const run of rows) {
      const record = await cluster.api<{
        status: string;
        result?: { _tag: string; reason?: string; message?: string };
      }>("proxy", "GET", `/v1/code-runs/${run.id}`);
      // Waiting only for a person: on a write whose outcome is Unknown (sent, but its answer could not be
      // stored while the database was away: never sent again on its own), or on a decision.
      if (record.status === "Waiting") {
        const why = await cluster.db().query(
          `select c.idx, c.unknown_state, c.outcome_enc is not null as done,
               (select string_agg(d.status, ',') from decisions d where d.run_id = c.run_id and d.call_index = c.idx) as decisions
             from code_run_calls c where c.run_id = $1`,
          [run.id],
        );
        const forPerson = why.rows.filter((c) => c.unknown_state === "pending" || c.decisions === "pending");
        expect(forPerson.length, `run ${run.id} waits for nobody: ${JSON.stringify(why.rows)}`).toBe(1);
      } else expect(["Completed", "Failed"]).toContain(record.status);
      if (record.status === "Failed") {
        expect(record.result?.reason, JSON.stringify(record)).toBeTruthy();
        expect(record.result?.message, JSON.stringify(record)).toBeTruthy();
      }
      const i = byChat.get(run.chat_id)!;
      const counts = (
        await cluster
          .db()
          .query<{ subject: string; n: number }>(
            "select subject, count(*)::int as n from emails where subject like $1 group by subject",
            [`${tag}-${i}-%`],
          )
      ).rows;
      for (const c of counts) expect(c.n, `email ${c.subject} sent ${c.n} times`).toBe(1);
      if (record.status === "Completed") expect(counts).toHaveLength(EMAILS);
    }
    await sleep(500);
    for (const instance of Object.values(cluster.instances)) {
      const log = instance!.log();
      expect(log).not.toMatch(/uncaught|unhandled/i);
    }
  }, 300_000);

  it.skipIf(!!whyNotDown)(
    "while Postgres is down every request answers 503 saying so, and all serve again once it is back",
    async () => {
      const chat = (await cluster.api<{ id: string }>("a", "POST", "/v1/chats", {})).id;
      const send = async (where: "a" | "b", method: string, route: string, body?: unknown) => {
        const r = await fetch(`${cluster.at(where)}${route}`, {
          method,
          headers: cluster.auth,
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: r.status, text: await r.text() };
      };
      const requests = (where: "a" | "b") =>
        (
          [
            ["POST", `/v1/chats/${chat}/code-runs`, { code: "return 6 * 7" }],
            ["POST", "/v1/chats", {}],
            ["GET", "/v1/chats"],
            ["GET", `/v1/chats/${chat}/code-runs`],
            ["GET", "/api/trpc/chats.list"],
            ["POST", "/api/trpc/chats.create", {}],
          ] as [string, string, unknown?][]
        ).map(([method, route, body]) =>
          send(where, method, route, body).then((a) => ({ where, method, route, ...a })),
        );

      execSync(stop!, { stdio: "inherit", timeout: 60_000 });
      try {
        const answers = await Promise.all([...requests("a"), ...requests("b")]);
        for (const a of answers) {
          const what = `${a.where}: ${a.method} ${a.route} answered ${a.status} ${a.text}`;
          expect(a.status, what).toBe(503);
          // REST and tRPC alike answer `{ error: { message, … } }`.
          const message = (JSON.parse(a.text) as { error: { message: string } }).error.message;
          expect(message, what).toMatch(/database is unavailable right now.*err_[0-9a-f-]+/);
          if (a.route.endsWith("/code-runs") && a.method === "POST")
            expect(message, what).toMatch(/no run was made|request was not carried out/);
        }
      } finally {
        execSync(start!, { stdio: "inherit", timeout: 60_000 });
        await cluster.reconnectDb();
      }
      // Back: both instances serve again without a restart of their own, and the run nobody made is not there.
      expect(
        (await cluster.db().query("select count(*)::int as n from code_runs where chat_id = $1", [chat])).rows[0].n,
      ).toBe(0);
      for (const where of ["a", "b"] as const) {
        const answered = await until(
          `${where} serving again`,
          async () => {
            const a = await send(where, "POST", `/v1/chats/${chat}/code-runs`, { code: "return 6 * 7" });
            return a.status === 200 ? a : undefined;
          },
          30_000,
        );
        expect(JSON.parse(answered.text)).toMatchObject({
          status: "Completed",
          result: { _tag: "Completed", value: 42 },
        });
      }
      for (const instance of Object.values(cluster.instances))
        expect(instance!.log()).not.toMatch(/uncaught|unhandled/i);
    },
    120_000,
  );
});

/**
 * An App asks a person a question (MCP elicitation/create) — the `everything` reference server's
 * trigger-elicitation-request — against the built server: the program's call parks its run (Waiting), the
 * chat shows a form generated from the App's schema, and the answer (from the form or over
 * `/v1/app-operations`) reaches the App; its result is the call's outcome and the run completes. With two
 * calls in flight on one connection, the question is attached to the call that asked it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { type APIRequestContext, expect, test } from "@playwright/test";
import { admin, newChat, patchSettings, signIn } from "./helpers";

const EVERYTHING = path.resolve("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const HTTP_PORT = Number(process.env.OPENBOT_E2E_ELICIT_PORT ?? Number(process.env.OPENBOT_E2E_PORT ?? 3100) + 2);

const ASK_PROGRAM = `const r = await apps.everything.trigger_elicitation_request({})
return r.content.map((c) => c.text).join("\\n")`;

test.describe.configure({ mode: "serial" });

async function connection(
  request: APIRequestContext,
  name: string,
  transport: Record<string, unknown>,
  policies: Record<string, string>,
) {
  const all = (await (await request.get("/v1/connections", { headers: admin })).json()) as {
    id: string;
    name: string;
  }[];
  let found = all.find((c) => c.name === name);
  if (!found) {
    const r = await request.post("/v1/connections", { headers: admin, data: { name, transport } });
    expect(r.status(), await r.text()).toBe(201);
    found = await r.json();
  }
  expect(
    (await request.patch(`/v1/connections/${found!.id}/policies`, { headers: admin, data: policies })).status(),
  ).toBe(200);
  // These tests are about questions, not taint: the admin trusts this App (an http App is untrusted by default,
  // which would make every write after a read ask for a decision).
  expect(
    (
      await request.patch(`/v1/connections/${found!.id}`, { headers: admin, data: { untrustedContent: false } })
    ).status(),
  ).toBe(200);
  return found!.id;
}

async function serverRun(request: APIRequestContext, code: string) {
  const chat = await (await request.post("/v1/chats", { headers: admin, data: { title: "questions" } })).json();
  const r = await request.post(`/v1/chats/${chat.id}/code-runs`, { headers: admin, data: { code, reason: "ask" } });
  expect(r.status(), await r.text()).toBe(200);
  return { chatId: chat.id as string, record: await r.json() };
}

async function runRecord(request: APIRequestContext, id: string) {
  return (await request.get(`/v1/code-runs/${id}`, { headers: admin })).json();
}

async function completedRun(request: APIRequestContext, id: string) {
  await expect.poll(async () => (await runRecord(request, id)).status, { timeout: 30_000 }).toBe("Completed");
  return runRecord(request, id);
}

test.beforeAll(async ({ request }) => {
  await patchSettings(request, { codeMode: { enabled: true } });
  await connection(
    request,
    "Everything",
    { type: "preset", preset: "everything" },
    { "trigger-elicitation-request": "allow" },
  );
});

test("from the chat: the run waits, the form appears, the answer reaches the App and the run completes", async ({
  page,
  request,
}) => {
  await signIn(page);
  const chatId = await newChat(page);
  const write = page.getByRole("button", { name: "Write a program yourself" });
  if (await write.isVisible()) await write.click();
  await page.getByRole("textbox", { name: "Program" }).fill(ASK_PROGRAM);
  await page.getByRole("button", { name: "Run program" }).click();
  const card = page.getByTestId("run-card").last();
  await expect(card).toHaveAttribute("data-status", "Waiting");

  const form = page.getByTestId("input-form");
  await expect(form).toBeVisible();
  await expect(form).toContainText("apps.everything.trigger_elicitation_request");
  await expect(form).toContainText("Please provide inputs for the following fields");
  await form.getByLabel("String *", { exact: true }).fill("Ada Lovelace");
  await form.getByRole("button", { name: "Send answer" }).click();
  await expect(form).toHaveCount(0);
  await expect(card).toHaveAttribute("data-status", "Completed", { timeout: 30_000 });
  await expect(card.getByTestId("run-value")).toContainText("Ada Lovelace");

  const [run] = await (await request.get(`/v1/chats/${chatId}/code-runs`, { headers: admin })).json();
  expect(run.calls[0].app).toMatchObject({ status: "Completed" });
  const text = JSON.stringify(run.calls[0].app.result);
  expect(text).toContain("Name: Ada Lovelace");
  expect(text).toContain("Guitar");
});

test("over the API: list the question, refuse strangers and other members, answer it once", async ({ request }) => {
  const { chatId, record } = await serverRun(request, ASK_PROGRAM);
  expect(record.status).toBe("Waiting");
  const operationId = record.calls[0].app.id;
  expect(record.calls[0].app).toMatchObject({ status: "InputRequired" });

  const listed = await request.get(`/v1/app-operations?chatId=${chatId}`, { headers: admin });
  expect(listed.status()).toBe(200);
  const pending = await listed.json();
  expect(pending).toHaveLength(1);
  expect(pending[0]).toMatchObject({
    operationId,
    binding: "everything.trigger_elicitation_request",
    runId: record.id,
  });
  expect(pending[0].requestedSchema.required).toEqual(["name"]);

  expect((await request.get(`/v1/app-operations?chatId=${chatId}`)).status()).toBe(401);
  expect(
    (await request.post(`/v1/app-operations/${operationId}/input`, { data: { action: "decline" } })).status(),
  ).toBe(401);
  const user = await (
    await request.post("/v1/users", { headers: admin, data: { name: "Other member", role: "member" } })
  ).json();
  const key = await (
    await request.post("/v1/api-keys", {
      headers: admin,
      data: { userId: user.id, name: "k", permissions: ["apps.use", "sessions.read", "sessions.write"] },
    })
  ).json();
  const other = { Authorization: `Bearer ${key.token}` };
  expect(
    (
      await request.post(`/v1/app-operations/${operationId}/input`, { headers: other, data: { action: "decline" } })
    ).status(),
  ).toBe(404);

  const bad = await request.post(`/v1/app-operations/${operationId}/input`, {
    headers: admin,
    data: { action: "accept", content: { check: true } },
  });
  expect(bad.status()).toBe(400);
  expect((await bad.json()).error.message).toContain("name");

  const answered = await request.post(`/v1/app-operations/${operationId}/input`, {
    headers: admin,
    data: { action: "accept", content: { name: "Grace Hopper", check: true } },
  });
  expect(answered.status(), await answered.text()).toBe(200);
  expect(await answered.json()).toMatchObject({ operationId, status: "Completed" });
  expect(await (await request.get(`/v1/app-operations?chatId=${chatId}`, { headers: admin })).json()).toEqual([]);
  const after = await completedRun(request, record.id);
  expect(after.calls[0].app.status).toBe("Completed");
  expect(JSON.stringify(after.calls[0].app.result)).toContain("Name: Grace Hopper");
  expect(after.result.value).toContain("Grace Hopper");
  expect(
    (
      await request.post(`/v1/app-operations/${operationId}/input`, { headers: admin, data: { action: "decline" } })
    ).status(),
  ).toBe(409);
});

test.describe("two calls in flight on one connection", () => {
  let everything: ChildProcess | undefined;
  test.beforeAll(async () => {
    everything = spawn(process.execPath, [EVERYTHING, "streamableHttp"], {
      env: { ...process.env, PORT: String(HTTP_PORT) },
      stdio: ["ignore", "ignore", "pipe"],
    });
    await new Promise<void>((resolve, reject) => {
      everything!.once("exit", () => reject(new Error("the everything server exited")));
      everything!.stderr!.on("data", (chunk: Buffer) => {
        if (/listening on port/i.test(chunk.toString())) resolve();
      });
    });
  });
  test.afterAll(async () => {
    if (everything && everything.exitCode === null) {
      const exited = new Promise((r) => everything!.once("exit", r));
      everything.kill("SIGTERM");
      await exited;
    }
  });

  test("only the call that asked gets the question", async ({ request }) => {
    await connection(
      request,
      "Everything web",
      { type: "http", url: `http://127.0.0.1:${HTTP_PORT}/mcp` },
      { "trigger-elicitation-request": "allow", "trigger-long-running-operation": "allow", echo: "allow" },
    );
    const { chatId, record } = await serverRun(
      request,
      `const slow = apps.everything_web.trigger_long_running_operation({ duration: 2, steps: 2 })
await apps.everything_web.echo({ message: "the slow call is out" })
const ask = apps.everything_web.trigger_elicitation_request({})
const [a, b] = await Promise.allSettled([slow, ask])
return {
  slow: a.status === "fulfilled" ? a.value.content[0].text : a.reason.name,
  ask: b.status === "fulfilled" ? "answered inline" : b.reason.name,
}`,
    );
    expect(record.status).toBe("Waiting");
    expect(record.calls.map((c: { app: { status: string } }) => c.app.status)).toEqual([
      "Completed",
      "Completed",
      "InputRequired",
    ]);

    const pending = await (await request.get(`/v1/app-operations?chatId=${chatId}`, { headers: admin })).json();
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({
      operationId: record.calls[2].app.id,
      binding: "everything_web.trigger_elicitation_request",
    });
    const answered = await request.post(`/v1/app-operations/${pending[0].operationId}/input`, {
      headers: admin,
      data: { action: "accept", content: { name: "Hedy Lamarr" } },
    });
    expect(await answered.json()).toMatchObject({ status: "Completed" });
    const done = await completedRun(request, record.id);
    expect(JSON.stringify(done.calls[2].app.result)).toContain("Name: Hedy Lamarr");
    // The re-run replays the slow call from the record and gets the answered question's result.
    expect(done.result.value.slow).toContain("Long running operation completed");
    expect(done.result.value.ask).toBe("answered inline");
  });
});

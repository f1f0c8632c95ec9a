/**
 * What a program sees when an App call fails, against the built server (`next build` output started as
 * `npm start` does, on its own port so its log can be read): `details.reason` is `invalid_arguments`
 * (naming the field, nothing sent), `tool_error` (with the App's own words), `timeout`, and `unavailable`
 * only when the App really is gone. The server log carries error ids and kinds, never a vault secret an
 * App echoed nor the program's own error text.
 */
import path from "node:path";
import { type APIRequestContext, expect, request as playwrightRequest, test } from "@playwright/test";
import { type BuiltServer, startBuiltServer } from "./helpers";

const PORT = Number(process.env.OPENBOT_E2E_ERRORS_PORT ?? Number(process.env.OPENBOT_E2E_PORT ?? 3100) + 3);
const BASE = `http://127.0.0.1:${PORT}`;
const TOKEN = "obk_app-errors-admin-token-for-tests";
const admin = { Authorization: `Bearer ${TOKEN}` };
const FIXTURE = path.resolve("test/apps/fixtures/trouble-server.mjs");
const DATA_DIR = path.resolve("test-results/app-errors-data");
const SECRET = "sk_live_vaultSecret_93f1c2";
const PROGRAM_TEXT = "PROGRAM-SECRET-TEXT";

let server: BuiltServer;
let api: APIRequestContext;

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  test.setTimeout(120_000);
  server = await startBuiltServer({
    port: PORT,
    dataDir: DATA_DIR,
    env: { OPENBOT_ADMIN_TOKEN: TOKEN, OPENBOT_APP_CALL_TIMEOUT_MS: "1500" },
  });
  api = await playwrightRequest.newContext({ baseURL: BASE });
  const current = await (await api.get("/v1/platform/settings", { headers: admin })).json();
  expect(
    (
      await api.patch("/v1/platform/settings", {
        headers: admin,
        data: { expectedVersion: current.version, codeMode: { enabled: true } },
      })
    ).status(),
  ).toBe(200);
  const added = await api.post("/v1/connections", {
    headers: admin,
    data: { name: "Trouble", transport: { type: "stdio", command: process.execPath, args: [FIXTURE] } },
  });
  expect(added.status()).toBe(201);
  expect(await added.json()).toMatchObject({ status: "connected" });
});

test.afterAll(async () => {
  await api?.dispose();
  await server?.stop();
});

async function run(code: string, chatId?: string) {
  const chat = chatId ?? (await (await api.post("/v1/chats", { headers: admin, data: { title: "errors" } })).json()).id;
  const r = await api.post(`/v1/chats/${chat}/code-runs`, { headers: admin, data: { code, reason: "error reasons" } });
  expect(r.status(), await r.text()).toBe(200);
  return { chatId: chat as string, record: await r.json() };
}

/** Runs one call and returns what the program caught. */
async function caught(call: string) {
  const { record } = await run(`try {
  await ${call}
  return "no error"
} catch (error) {
  return { name: error.name, reason: error.details && error.details.reason, message: error.message }
}`);
  expect(record.status).toBe("Completed");
  return record.result.value as { name: string; reason: string; message: string };
}

test("invalid arguments: invalid_arguments naming the field, checked before anything is sent", async () => {
  const missing = await caught("apps.trouble.needs_title({})");
  expect(missing).toMatchObject({ name: "AppCallFailed", reason: "invalid_arguments" });
  expect(missing.message).toContain("title");
  const wrongType = await caught("apps.trouble.needs_title({ title: 42 })");
  expect(wrongType).toMatchObject({ name: "AppCallFailed", reason: "invalid_arguments" });
  expect(wrongType.message).toContain("title");
  const extra = await caught('apps.trouble.needs_title({ title: "x", colour: "red" })');
  expect(extra).toMatchObject({ reason: "invalid_arguments" });
  expect(extra.message).toContain("colour");

  const { record } = await run("return (await apps.trouble.stats({})).structuredContent.received");
  expect(record.result.value["needs-title"]).toBeUndefined();
  expect(await caught('apps.trouble.needs_title({ title: "fine" })')).toBe("no error");
});

test("an isError result: tool_error with the App's own message", async () => {
  const refused = await caught('apps.trouble.fail({ text: "no such customer 17" })');
  expect(refused).toMatchObject({ name: "AppCallFailed", reason: "tool_error" });
  expect(refused.message).toContain("The App refused: no such customer 17");
});

test("an App slower than the call deadline: timeout", async () => {
  const slow = await caught("apps.trouble.slow({ ms: 600000 })");
  expect(slow).toMatchObject({ name: "AppCallFailed", reason: "timeout" });
});

test("the log has error ids and kinds, never an echoed vault secret or the program's error text", async () => {
  const entry = await api.post("/v1/vault", {
    headers: admin,
    data: { name: "billing/token", secret: SECRET, allow: [{ connection: "trouble", tool: "fail" }] },
  });
  expect(entry.status(), await entry.text()).toBe(201);
  const { chatId, record } = await run(`let seen
try {
  await apps.trouble.fail({ text: "token " + vault.billing.token })
} catch (error) {
  seen = error.message
}
console.log("the App said", seen)
throw new Error("${PROGRAM_TEXT}: " + seen)`);
  expect(record.status).toBe("Waiting");
  const [decision] = await (await api.get(`/v1/decisions?status=pending&chatId=${chatId}`, { headers: admin })).json();
  expect(
    (await api.post(`/v1/decisions/${decision.id}`, { headers: admin, data: { decision: "allow" } })).status(),
  ).toBe(200);
  let after = record;
  await expect
    .poll(async () => {
      after = await (await api.get(`/v1/code-runs/${record.id}`, { headers: admin })).json();
      return after.status;
    })
    .toBe("Failed");
  // The program itself saw the App's error with the secret hidden, and the record keeps its own text.
  expect(after.result).toMatchObject({ _tag: "Failed", reason: "Error" });
  expect(after.result.message).toContain(PROGRAM_TEXT);
  expect(after.result.message).toContain("⟦hidden:billing/token⟧");
  expect(JSON.stringify(after)).not.toContain(SECRET);

  // A call that fails in a way the server did not expect is logged too (by kind), and a crash is unavailable.
  const gone = await caught("apps.trouble.crash({})");
  expect(gone).toMatchObject({ name: "AppCallFailed", reason: "unavailable" });

  const log = server.log();
  const lines = log.split("\n");
  expect(lines.some((line) => line.includes(after.result.errorId) && line.includes('"kind":"Error"'))).toBe(true);
  expect(
    lines.some(
      (line) => line.includes('"event":"app_call_failed"') && line.includes('"kind":"AppCallError:tool_error"'),
    ),
  ).toBe(true);
  expect(log).not.toContain(SECRET);
  expect(log).not.toContain(PROGRAM_TEXT);
  expect(log).not.toContain("The App refused");
  expect(log).not.toContain("no such customer 17");
});

test("a misspelled tool or App: the run fails naming it and the binding meant", async () => {
  const tool = (await run(`return await apps.trouble.needs_titel({ title: "x" })`)).record;
  expect(tool.status).toBe("Failed");
  expect(tool.result.message).toContain(
    "(apps.trouble.needs_titel is not a tool of trouble; did you mean apps.trouble.needs_title?)",
  );
  const app = (await run(`return await apps.troubel.needs_title({ title: "x" })`)).record;
  expect(app.status).toBe("Failed");
  expect(app.result.message).toContain("(apps.troubel is not an App this run can call; did you mean apps.trouble?)");
});

/**
 * The HTTP trust boundary against the built server: a page on another port cannot act with the signed-in
 * person's cookie (REST form post, tRPC mutation), bodies are JSON, bounded, and never read before
 * authentication; every response carries the CSP and nosniff; the cookie is Secure behind an https
 * public origin; names with control characters are a 400; failed sign-ins are rate limited per address.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import path from "node:path";
import { type APIRequestContext, expect, test } from "@playwright/test";
import { startRunInput } from "../../contracts/code-run";
import { E2E_ADMIN_TOKEN } from "../../playwright.config";
import { admin, type BuiltServer, newChat, patchSettings, sessionCookie, signIn, startBuiltServer } from "./helpers";

const port = Number(process.env.OPENBOT_E2E_PORT ?? 3100);
const SERVER = `http://127.0.0.1:${port}`;
const FOREIGN_PORT = port + 2;
const FOREIGN = `http://127.0.0.1:${FOREIGN_PORT}`;
const HTTPS_PORT = port + 3;
const MARKER = path.resolve("test-results/csrf-marker");
const MiB = 1024 * 1024;

async function connectionNames(request: APIRequestContext): Promise<string[]> {
  const r = await request.get("/v1/connections", { headers: admin });
  expect(r.status()).toBe(200);
  return ((await r.json()) as { name: string }[]).map((c) => c.name);
}

async function chatTitles(request: APIRequestContext): Promise<string[]> {
  return ((await (await request.get("/v1/chats", { headers: admin })).json()) as { title: string }[]).map(
    (c) => c.title,
  );
}

const escapeAttr = (s: string) => s.replace(/&/g, "&amp;").replace(/'/g, "&#39;").replace(/</g, "&lt;");

test.describe("cross-origin requests with the session cookie", () => {
  let foreign: Server;
  test.beforeAll(async () => {
    rmSync(MARKER, { force: true });
    // A text/plain form posts `name=value`: the JSON is split so the `=` lands inside a string.
    const payload = JSON.stringify({
      name: "csrf-stdio",
      transport: {
        type: "stdio",
        command: process.execPath,
        args: ["-e", `require("fs").writeFileSync(${JSON.stringify(MARKER)}, "ran")`],
      },
      pad: "",
    });
    const [head, tail] = [payload.slice(0, -2), payload.slice(-2)];
    const html = `<!doctype html><form id="f" method="POST" enctype="text/plain" action="${SERVER}/v1/connections">
      <input type="hidden" name='${escapeAttr(head)}' value='${escapeAttr(tail)}'></form>
      <script>document.getElementById("f").submit()</script>`;
    // "/reads": a page that makes GETs to the app with the person's cookie (a same-site page: another port).
    const reads = `<!doctype html><script>
      for (const url of ["/v1/chats", "/api/trpc/chats.list"]) fetch(${JSON.stringify(SERVER)} + url, { credentials: "include", mode: "no-cors" });
      </script>`;
    foreign = createServer((req, res) =>
      res.writeHead(200, { "content-type": "text/html" }).end(req.url === "/reads" ? reads : html),
    );
    await new Promise<void>((resolve) => foreign.listen(FOREIGN_PORT, "127.0.0.1", resolve));
  });
  test.afterAll(async () => {
    await new Promise((resolve) => foreign.close(resolve));
  });

  test("a page on another port auto-submitting a text/plain form to POST /v1/connections is refused; nothing runs", async ({
    page,
    request,
  }) => {
    await signIn(page);
    const refused = page.waitForResponse(
      (r) => r.url() === `${SERVER}/v1/connections` && r.request().method() === "POST",
    );
    await page.goto(`${FOREIGN}/`);
    const response = await refused;
    expect(response.status()).toBe(403);
    expect((await response.json()).error.message).toContain(`from the origin ${FOREIGN} is not allowed`);
    expect(await connectionNames(request)).not.toContain("csrf-stdio");
    expect(existsSync(MARKER)).toBe(false);
  });

  test("REST and tRPC mutations with the cookie and a foreign Origin are refused; the app's own origin works", async ({
    page,
    request,
  }) => {
    await signIn(page);
    const cookie = await sessionCookie(page.context(), SERVER);
    const json = { "content-type": "application/json" };

    const trpc = await request.post("/api/trpc/chats.create", {
      headers: { ...json, cookie, origin: FOREIGN },
      data: { title: "csrf-trpc" },
    });
    expect(trpc.status()).toBe(403);
    expect(JSON.stringify(await trpc.json())).toContain("Refused");
    const batch = await request.post("/api/trpc/chats.create?batch=1", {
      headers: { ...json, cookie, origin: FOREIGN },
      data: { 0: { title: "csrf-batch" } },
    });
    expect(batch.status()).toBe(403);
    const rest = await request.post("/v1/chats", {
      headers: { ...json, cookie, origin: FOREIGN },
      data: { title: "csrf-rest" },
    });
    expect(rest.status()).toBe(403);
    const noOrigin = await request.post("/v1/chats", {
      headers: { ...json, cookie },
      data: { title: "csrf-no-origin" },
    });
    expect(noOrigin.status()).toBe(403);
    expect((await noOrigin.json()).error.message).toContain("Origin");
    const crossSite = await request.post("/v1/chats", {
      headers: { ...json, cookie, "sec-fetch-site": "same-site" },
      data: { title: "csrf-same-site" },
    });
    expect(crossSite.status()).toBe(403);
    const signInFromElsewhere = await request.post("/api/trpc/auth.signIn", {
      headers: { ...json, origin: FOREIGN },
      data: { token: E2E_ADMIN_TOKEN },
    });
    expect(signInFromElsewhere.status()).toBe(403);
    expect(signInFromElsewhere.headers()["set-cookie"]).toBeUndefined();
    const titles = await chatTitles(request);
    for (const t of ["csrf-trpc", "csrf-batch", "csrf-rest", "csrf-no-origin", "csrf-same-site"])
      expect(titles).not.toContain(t);

    const own = await request.post("/v1/chats", {
      headers: { ...json, cookie, origin: SERVER },
      data: { title: "own origin" },
    });
    expect(own.status()).toBe(201);
    const fetchSite = await request.post("/api/trpc/chats.create", {
      headers: { ...json, cookie, "sec-fetch-site": "same-origin" },
      data: { title: "same-origin fetch" },
    });
    expect(fetchSite.status()).toBe(200);

    // The UI itself (tRPC mutations from the page, with Chromium's own Origin header) still works.
    const chatId = await newChat(page);
    expect(chatId).toMatch(/^chat_/);
  });

  test("codeRuns.hostAlive (a page's lease on its run) is refused from another origin, to a stranger and to a key without apps.use; the host's own page renews it", async ({
    page,
    request,
  }) => {
    await patchSettings(request, { codeMode: { enabled: true } });
    await signIn(page);
    const cookie = await sessionCookie(page.context(), SERVER);
    const own = { "content-type": "application/json", cookie, origin: SERVER };
    const chatId = await newChat(page);
    const started = await request.post("/api/trpc/codeRuns.start", {
      headers: own,
      data: { chatId, code: "return 1" },
    });
    expect(started.status()).toBe(200);
    const { runId, attempt } = (
      (await started.json()) as { result: { data: { ticket: { runId: string; attempt: number } } } }
    ).result.data.ticket;
    const alive = (headers: Record<string, string>) =>
      request.post("/api/trpc/codeRuns.hostAlive", { headers, data: { runId, attempt } });
    const updatedAt = async () =>
      ((await (await request.get(`/v1/code-runs/${runId}`, { headers: admin })).json()) as { updatedAt: number })
        .updatedAt;
    const keyFor = async (userId: string, permissions: string[]) => {
      const key = await request.post("/v1/api-keys", { headers: admin, data: { userId, name: "lease", permissions } });
      expect(key.status()).toBe(201);
      return {
        "content-type": "application/json",
        Authorization: `Bearer ${((await key.json()) as { token: string }).token}`,
      };
    };
    const me = (await (await request.get("/api/trpc/auth.me", { headers: { cookie } })).json()) as {
      result: { data: { userId: string } };
    };
    const user = await request.post("/v1/users", { headers: admin, data: { name: "Lease stranger", role: "member" } });
    const stranger = await keyFor(((await user.json()) as { id: string }).id, [
      "apps.use",
      "sessions.read",
      "sessions.write",
    ]);
    const before = await updatedAt();
    await new Promise((resolve) => setTimeout(resolve, 20));

    expect((await alive({ "content-type": "application/json", cookie, origin: FOREIGN })).status()).toBe(403);
    expect((await alive(stranger)).status()).toBe(404);
    expect((await alive(await keyFor(me.result.data.userId, ["sessions.read", "sessions.write"]))).status()).toBe(403);
    expect(await updatedAt()).toBe(before);

    const renewed = await alive(own);
    expect(renewed.status()).toBe(200);
    expect(((await renewed.json()) as { result: { data: unknown } }).result.data).toEqual({ alive: true });
    expect(await updatedAt()).toBeGreaterThan(before);
  });

  test("GETs with the cookie from another page are refused (some reads have effects); the app's own pages, typed URLs and API keys are not", async ({
    page,
    request,
  }) => {
    await signIn(page);
    const refused = ["/v1/chats", "/api/trpc/chats.list"].map((url) =>
      page.waitForResponse((r) => r.url().startsWith(`${SERVER}${url}`)),
    );
    await page.goto(`${FOREIGN}/reads`);
    // Chromium marks them Sec-Fetch-Site: same-site (Playwright does not list that header).
    for (const response of await Promise.all(refused)) expect(response.status()).toBe(403);
    const cookie = await sessionCookie(page.context(), SERVER);
    const get = (headers: Record<string, string>) => request.get("/v1/chats", { headers });
    const sameSite = await get({ cookie, "sec-fetch-site": "same-site" });
    expect(sameSite.status()).toBe(403);
    expect((await sameSite.json()).error.message).toContain("from a same-site page is not allowed");
    expect((await get({ cookie, "sec-fetch-site": "cross-site" })).status()).toBe(403);
    expect((await get({ cookie, "sec-fetch-site": "same-origin" })).status()).toBe(200);
    expect((await get({ cookie, "sec-fetch-site": "none" })).status()).toBe(200);
    expect((await get({ ...admin, "sec-fetch-site": "cross-site" })).status()).toBe(200);
    // Metrics too, at both of their paths (`/metrics` is a rewrite to `/v1/metrics`).
    for (const url of ["/v1/metrics", "/metrics"])
      for (const site of ["same-site", "cross-site"])
        expect(
          `${url} ${site}: ${(await request.get(url, { headers: { cookie, "sec-fetch-site": site } })).status()}`,
        ).toBe(`${url} ${site}: 403`);
    // The page itself reads its chats with GETs.
    await page.goto("/");
    const chatId = await newChat(page);
    expect(chatId).toMatch(/^chat_/);
  });

  test("Bearer requests need no Origin (and ignore a foreign one); bodies must be application/json", async ({
    page,
    request,
  }) => {
    const created = await request.post("/v1/chats", { headers: admin, data: { title: "bearer" } });
    expect(created.status()).toBe(201);
    expect(
      (
        await request.post("/v1/chats", { headers: { ...admin, origin: FOREIGN }, data: { title: "bearer 2" } })
      ).status(),
    ).toBe(201);

    const plain = await request.post("/v1/chats", {
      headers: { ...admin, "content-type": "text/plain" },
      data: JSON.stringify({ title: "plain" }),
    });
    expect(plain.status()).toBe(415);
    expect((await plain.json()).error.message).toContain("Content-Type: application/json (got text/plain)");
    const form = await request.post("/v1/chats", { headers: admin, form: { title: "form" } });
    expect(form.status()).toBe(415);
    expect(await chatTitles(request)).not.toContain("plain");

    await signIn(page);
    const cookie = await sessionCookie(page.context(), SERVER);
    const sameOriginPlain = await request.post("/v1/chats", {
      headers: { cookie, origin: SERVER, "content-type": "text/plain" },
      data: '{"title":"p"}',
    });
    expect(sameOriginPlain.status()).toBe(415);
  });
});

test("every response carries the CSP (frame-ancestors 'none') and nosniff: pages, API answers and errors", async ({
  request,
}) => {
  for (const url of ["/", "/lab/sandbox", "/v1/health", "/v1/chats", "/api/trpc/auth.me"]) {
    const r = await request.get(url);
    expect(r.headers()["content-security-policy"], url).toContain("frame-ancestors 'none'");
    expect(r.headers()["content-security-policy"], url).toContain("'wasm-unsafe-eval'");
    expect(r.headers()["x-content-type-options"], url).toBe("nosniff");
  }
  const refused = await request.post("/v1/chats", { headers: { ...admin, "content-type": "text/plain" }, data: "x" });
  expect(refused.headers()["x-content-type-options"]).toBe("nosniff");
});

/** The e2e server's process (scripts/e2e-server.mjs started by Playwright with PORT=<our port>). */
function serverPid(): number | null {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (!cmd.includes("scripts/e2e-server.mjs")) continue;
      const env = readFileSync(`/proc/${entry}/environ`, "utf8").split("\0");
      if (env.includes(`PORT=${port}`) && path.basename(cmd.split("\0")[0]!).startsWith("node")) return Number(entry);
    } catch {
      // a process that ended or is not ours
    }
  }
  return null;
}

const rssKb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);

interface RawResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  bytesSent: number;
  /** The server closed the connection before its answer could be read (status 0). */
  reset?: boolean;
}

/**
 * A big body refused before it was read: the server's answer, or — when the server closes while the client
 * is still sending, and TCP's reset takes the answer with it — a closed connection; either way the upload
 * was cut short.
 */
function expectRefusedEarly(result: RawResult, status: number, total: number) {
  if (!result.reset) expect(result.status).toBe(status);
  expect(result.bytesSent).toBeLessThan(total);
}

/**
 * POSTs up to `total` bytes in 1 MiB chunks (chunked, or with Content-Length when `declare`), and stops
 * sending as soon as the server answers. `localAddress` picks the client's loopback address.
 */
function rawPost(
  url: string,
  headers: Record<string, string>,
  total: number,
  opts: { declare?: boolean; localAddress?: string; body?: string } = {},
): Promise<RawResult> {
  return new Promise((resolve, reject) => {
    const data = opts.body !== undefined ? Buffer.from(opts.body) : null;
    const size = data ? data.length : total;
    const req = httpRequest(`${SERVER}${url}`, {
      method: "POST",
      agent: false,
      headers: { ...headers, ...(opts.declare || data ? { "content-length": String(size) } : {}) },
      localAddress: opts.localAddress,
    });
    let sent = 0;
    let answered = false;
    const chunk = Buffer.alloc(MiB, 0x20);
    req.on("response", (res) => {
      answered = true;
      const parts: Buffer[] = [];
      res.on("data", (d: Buffer) => parts.push(d));
      res.on("end", () => {
        resolve({
          status: res.statusCode!,
          headers: res.headers,
          body: Buffer.concat(parts).toString("utf8"),
          bytesSent: sent,
        });
        req.destroy();
      });
    });
    let failed = false;
    req.on("error", (e: NodeJS.ErrnoException) => {
      failed = true;
      if (answered) return;
      // The server may answer and close while we are still writing: the write fails (EPIPE, ECONNRESET)
      // just before its response is parsed. Give that response a moment to arrive before failing.
      if (e.code === "EPIPE" || e.code === "ECONNRESET") {
        setTimeout(
          () => answered || resolve({ status: 0, headers: {}, body: "", bytesSent: sent, reset: true }),
          2_000,
        );
      } else reject(e);
    });
    if (data) {
      sent = data.length;
      req.end(data);
      return;
    }
    const pump = () => {
      while (!answered && !failed && sent < total) {
        const n = Math.min(MiB, total - sent);
        sent += n;
        if (!req.write(n === MiB ? chunk : chunk.subarray(0, n))) return void req.once("drain", pump);
      }
      if (!answered && !failed) req.end();
    };
    pump();
  });
}

test.describe("request bodies", () => {
  test("an unauthenticated 50 MB body gets 401 before it is read, and the server does not grow", async () => {
    const pid = serverPid();
    expect(pid, "the e2e server's process").not.toBeNull();
    const before = rssKb(pid!);
    const json = { "content-type": "application/json" };
    const total = 50 * 1000 * 1000;
    expectRefusedEarly(await rawPost("/v1/connections", json, total), 401, total);
    expectRefusedEarly(await rawPost("/v1/chats", json, total, { declare: true }), 401, total);
    expectRefusedEarly(await rawPost("/api/trpc/chats.create", json, total), 401, total);
    // Sign-in is open to strangers, but only for a small body.
    const signInBomb = await rawPost("/api/trpc/auth.signIn", json, total);
    expectRefusedEarly(signInBomb, 413, total);
    if (!signInBomb.reset) expect(signInBomb.body).toContain("16 KiB");
    // The answers themselves, with a body the client finishes sending first.
    const small = await rawPost("/v1/connections", json, 0, { body: "{}" });
    expect(small.status).toBe(401);
    expect(rssKb(pid!) - before, "server RSS growth in KiB").toBeLessThan(30 * 1024);
  });

  test("an authenticated body over OPENBOT_MAX_BODY_BYTES (4 MiB) gets 413 naming the limit; the largest program still runs", async ({
    request,
  }) => {
    const headers = { ...admin, "content-type": "application/json" };
    const big = `{"title":"${"x".repeat(5 * MiB)}"}`;
    const declared = await rawPost("/v1/chats", headers, 0, { body: big });
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.body).error.message).toBe(
      "The request body is larger than the limit of 4 MiB (4194304 bytes; OPENBOT_MAX_BODY_BYTES).",
    );
    // A declared length over the limit: its bytes are read and dropped before the answer, so a client that
    // sends them all gets the 413 rather than a reset connection (the answer comes after the last byte).
    const declaredStream = await rawPost("/v1/chats", headers, 5 * MiB, { declare: true });
    expect(declaredStream.reset).toBeFalsy();
    expect(declaredStream.status).toBe(413);
    expect(declaredStream.bytesSent).toBe(5 * MiB);
    // Past 16 × the limit nothing is read: the refusal (or a cut) comes before the client is done.
    expectRefusedEarly(await rawPost("/v1/chats", headers, 100 * MiB, { declare: true }), 413, 100 * MiB);
    const streamed = await rawPost("/v1/chats", headers, 6 * MiB);
    expect(streamed.status).toBe(413);
    const trpc = await rawPost("/api/trpc/chats.create", headers, 6 * MiB);
    expect(trpc.status).toBe(413);
    expect(trpc.body).toContain("OPENBOT_MAX_BODY_BYTES");
    expect(await chatTitles(request)).not.toContain("x".repeat(10));

    // Just under the limit passes the boundary (and is then judged by the route's own schema).
    const under = await request.post("/v1/chats", { headers, data: { title: "x".repeat(3 * MiB) } });
    expect(under.status()).toBe(400);
    expect((await under.json()).error.message).toContain("title must be at most 200 characters");

    await patchSettings(request, { codeMode: { enabled: true } });
    const chat = await (await request.post("/v1/chats", { headers: admin, data: { title: "big program" } })).json();
    const max = startRunInput.shape.code.maxLength ?? 200_000;
    const head = 'return "big program ran"\n//';
    const code = head + "x".repeat(max - head.length);
    const run = await request.post(`/v1/chats/${chat.id}/code-runs`, {
      headers: admin,
      data: { code, reason: "largest program" },
    });
    expect(run.status()).toBe(200);
    const record = await run.json();
    expect(record.status).toBe("Completed");
    expect(record.result.value).toBe("big program ran");
  });
});

test("names with control characters are a 400 naming the field, on REST and tRPC", async ({ request }) => {
  const chat = await request.post("/v1/chats", { headers: admin, data: { title: "a\u0000b" } });
  expect(chat.status()).toBe(400);
  expect((await chat.json()).error.message).toContain("title must not contain control characters");
  const trpc = await request.post("/api/trpc/chats.create", { headers: admin, data: { title: "a\u0000b" } });
  expect(trpc.status()).toBe(400);
  expect(JSON.stringify(await trpc.json())).toContain("title must not contain control characters");

  const user = await request.post("/v1/users", { headers: admin, data: { name: "nul\u0000user", role: "member" } });
  expect(user.status()).toBe(400);
  expect((await user.json()).error.message).toContain("name must not contain control characters");
  const member = await (
    await request.post("/v1/users", { headers: admin, data: { name: "Nul tester", role: "member" } })
  ).json();
  const key = await request.post("/v1/api-keys", {
    headers: admin,
    data: { userId: member.id, name: "k\u0000", permissions: [] },
  });
  expect(key.status()).toBe(400);
  expect((await key.json()).error.message).toContain("name must not contain control characters");
  const connection = await request.post("/v1/connections", {
    headers: admin,
    data: { name: "c\u0000", transport: { type: "preset", preset: "memory" } },
  });
  expect(connection.status()).toBe(400);
  expect((await connection.json()).error.message).toContain("name must not contain control characters");
  const vault = await request.post("/v1/vault", { headers: admin, data: { name: "a\u0000b", secret: "s" } });
  expect(vault.status()).toBe(400);
  expect((await vault.json()).error.message).toContain("name");
  const rotate = await request.put("/v1/vault/a%00b", { headers: admin, data: { secret: "s" } });
  expect(rotate.status()).toBe(400);
  expect((await rotate.json()).error.message).toContain("name");
});

test("ids and filters with a NUL, and paths that are not UTF-8, are a 400 in the API's shape, never a 500", async ({
  request,
}) => {
  for (const [route, field] of [
    ["/v1/code-runs/%00", "path.id"],
    ["/v1/chats/%00/code-runs", "path.chatId"],
    ["/v1/grants?chatId=%00", "query.chatId"],
    ["/v1/decisions?chatId=a%00", "query.chatId"],
  ] as const) {
    const r = await request.get(route, { headers: admin });
    expect(r.status(), route).toBe(400);
    expect((await r.json()).error.message, route).toContain(`${field}: must not contain a NUL character`);
  }
  const decide = await request.post("/v1/decisions/%00", { headers: admin, data: { decision: "allow" } });
  expect(decide.status()).toBe(400);
  const member = await (
    await request.post("/v1/users", { headers: admin, data: { name: "Nul id tester", role: "member" } })
  ).json();
  expect(member.id).toBeTruthy();
  const key = await request.post("/v1/api-keys", {
    headers: admin,
    data: { userId: "a\u0000b", name: "k", permissions: [] },
  });
  expect(key.status()).toBe(400);
  expect((await key.json()).error.message).toContain("userId must not contain control characters");
  for (const route of ["/v1/code-runs/%C0%80", "/v1/code-runs/%ED%A0%80"]) {
    const r = await request.get(route, { headers: admin });
    expect(r.status(), route).toBe(400);
    expect(await r.json()).toEqual({
      error: { code: "BAD_REQUEST", message: "The request path is not valid percent-encoded UTF-8." },
    });
  }
  expect((await request.get("/v1/code-runs/%E2%82%AC", { headers: admin })).status()).toBe(404);
});

test("a method a route does not take is a 405 in the API's shape that names the methods it takes (Allow too)", async ({
  request,
}) => {
  for (const [method, route, takes] of [
    ["POST", "/v1/grants", "GET"],
    ["PUT", "/v1/connections/conn_work_calendar", "DELETE, PATCH"],
    ["DELETE", "/v1/health", "GET"],
  ] as const) {
    const r = await request.fetch(route, { method, headers: admin, data: method === "DELETE" ? undefined : {} });
    expect(r.status(), `${method} ${route}`).toBe(405);
    expect(r.headers()["content-type"]).toContain("application/json");
    expect(r.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(r.headers().allow).toContain(takes.split(", ")[0]);
    expect(await r.json()).toEqual({
      error: { code: "METHOD_NOT_ALLOWED", message: `${method} is not allowed on ${route}: it takes ${takes}.` },
    });
  }
  // A method the route takes is not touched.
  expect((await request.get("/v1/health")).status()).toBe(200);
});

test("failed sign-ins are limited per address (429 with Retry-After); another address still signs in", async () => {
  const json = { "content-type": "application/json" };
  const attempt = (token: string, localAddress: string) =>
    rawPost("/api/trpc/auth.signIn", json, 0, { body: JSON.stringify({ token }), localAddress });
  for (let i = 0; i < 10; i++) expect((await attempt(`obk_wrong-${i}`, "127.0.0.2")).status).toBe(401);
  const limited = await attempt("obk_wrong-again", "127.0.0.2");
  expect(limited.status).toBe(429);
  expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
  expect(limited.body).toContain("Too many failed sign-ins from your address");
  // Even the right token waits at the limited address; a different address is not affected.
  expect((await attempt(E2E_ADMIN_TOKEN, "127.0.0.2")).status).toBe(429);
  const other = await attempt(E2E_ADMIN_TOKEN, "127.0.0.3");
  expect(other.status).toBe(200);
  expect(String(other.headers["set-cookie"])).toContain("openbot_session=");
});

test.describe("behind a reverse proxy: OPENBOT_PUBLIC_ORIGIN", () => {
  const PUBLIC = "https://openbot.example.test";
  const base = `http://127.0.0.1:${HTTPS_PORT}`;
  let server: BuiltServer;
  test.beforeAll(async () => {
    test.setTimeout(120_000);
    server = await startBuiltServer({
      port: HTTPS_PORT,
      dataDir: "test-results/e2e-data-public-origin",
      env: { OPENBOT_ADMIN_TOKEN: E2E_ADMIN_TOKEN, OPENBOT_PUBLIC_ORIGIN: PUBLIC },
    });
  });
  test.afterAll(() => server?.stop());

  test("the session cookie is Secure, and only the public origin may use it", async ({ request }) => {
    const json = { "content-type": "application/json" };
    const local = await request.post(`${base}/api/trpc/auth.signIn`, {
      headers: { ...json, origin: base },
      data: { token: E2E_ADMIN_TOKEN },
    });
    expect(local.status()).toBe(403);
    expect(JSON.stringify(await local.json())).toContain("OPENBOT_PUBLIC_ORIGIN");
    const signedIn = await request.post(`${base}/api/trpc/auth.signIn`, {
      headers: { ...json, origin: PUBLIC },
      data: { token: E2E_ADMIN_TOKEN },
    });
    expect(signedIn.status()).toBe(200);
    const setCookie = signedIn.headers()["set-cookie"] ?? "";
    expect(setCookie).toContain("openbot_session=");
    expect(setCookie).toMatch(/;\s*Secure/i);
    const cookie = setCookie.split(";")[0]!;
    expect(
      (
        await request.post(`${base}/v1/chats`, {
          headers: { ...json, cookie, origin: PUBLIC },
          data: { title: "via proxy" },
        })
      ).status(),
    ).toBe(201);

    // The plain-http e2e server does not mark it Secure.
    const plain = await request.post(`${SERVER}/api/trpc/auth.signIn`, {
      headers: { ...json, origin: SERVER },
      data: { token: E2E_ADMIN_TOKEN },
    });
    expect(plain.headers()["set-cookie"]).not.toMatch(/Secure/i);
  });
});

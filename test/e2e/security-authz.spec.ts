/**
 * Authorization against the built server, over HTTP: every REST route (read from app/v1 on disk, so a
 * new one must join the access table) refuses a stranger, a key without permissions, an admin's key
 * without the permission it needs, and a member on admin routes. API keys hold exactly their
 * permissions. A page's read of App data (the outbox) passes the tool's policy. Vault secrets cannot
 * be laundered through Notes, and an entry is usable (and visible) only by whom it names.
 */
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { type APIRequestContext, expect, test } from "@playwright/test";
import { REST_ACCESS } from "../../contracts/access";
import { PERMISSIONS, type Permission } from "../../contracts/permissions";
import { admin, patchSettings, signIn } from "./helpers";

test.describe.configure({ mode: "serial" });

// The specs share one server: leave the vault as it was found (vault.spec lists its one entry).
test.afterAll(async ({ request }) => {
  for (const name of ["launder/token", "ui/shared"]) await request.delete(`/v1/vault/${name}`, { headers: admin });
});

type Headers = Record<string, string>;

async function keyFor(
  request: APIRequestContext,
  role: "admin" | "member",
  permissions: readonly Permission[],
): Promise<Headers & { userId: string; name: string }> {
  // Names of people who belong are unique: each key gets a person of its own.
  const name = `${role} ${permissions.join("+") || "none"} ${randomUUID().slice(0, 6)}`;
  const user = await request.post("/v1/users", { headers: admin, data: { name, role } });
  expect(user.status()).toBe(201);
  const { id } = (await user.json()) as { id: string };
  const key = await request.post("/v1/api-keys", {
    headers: admin,
    data: { userId: id, name: "authz test", permissions },
  });
  expect(key.status()).toBe(201);
  const { token } = (await key.json()) as { token: string };
  return { Authorization: `Bearer ${token}`, userId: id, name };
}
const auth = (h: Headers) => ({ Authorization: h.Authorization! });

/** `METHOD /v1/…` for every handler exported by a route file under app/v1, with the file's text. */
function routesOnDisk(): { route: string; text: string }[] {
  const root = path.join(process.cwd(), "app");
  const found: { route: string; text: string }[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = path.join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name === "route.ts") {
        const text = readFileSync(p, "utf8");
        const url = `/${path.relative(root, dir).split(path.sep).join("/")}`;
        for (const m of text.matchAll(/export (?:const|async function) (GET|POST|PUT|PATCH|DELETE)\b/g))
          found.push({ route: `${m[1]} ${url}`, text });
      }
    }
  };
  walk(path.join(root, "v1"));
  return found.sort((a, b) => a.route.localeCompare(b.route));
}

const concrete = (route: string) => route.replace("[...name]", "some/entry").replace(/\[[^\]]+\]/g, "x_1");

async function call(request: APIRequestContext, route: string, headers: Headers) {
  const [method, url] = route.split(" ") as [string, string];
  return request.fetch(concrete(url), { method, headers, ...(method === "GET" ? {} : { data: {} }) });
}

test("every REST route is in the access table and checks its own row", () => {
  const disk = routesOnDisk();
  expect(disk.map((r) => r.route)).toEqual(Object.keys(REST_ACCESS).sort((a, b) => a.localeCompare(b)));
  for (const { route, text } of disk) {
    if (REST_ACCESS[route as keyof typeof REST_ACCESS] === "public") continue;
    const escaped = route.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    expect(text, route).toMatch(new RegExp(`guard(<\\w+>)?\\("${escaped}"`));
  }
});

test("every guarded route: stranger 401, no-permission key 403, an admin's key without the needed permission 403, member 403 on admin routes", async ({
  request,
}) => {
  const none = await keyFor(request, "admin", []);
  const member = await keyFor(request, "member", ["apps.use", "sessions.read", "sessions.write"]);
  const without = new Map<Permission, Headers>();
  for (const p of PERMISSIONS)
    without.set(
      p,
      await keyFor(
        request,
        "admin",
        PERMISSIONS.filter((x) => x !== p),
      ),
    );
  for (const [route, rule] of Object.entries(REST_ACCESS)) {
    if (rule === "public") continue;
    const statusOf = async (h: Headers) => `${route}: ${(await call(request, route, h)).status()}`;
    expect(await statusOf({})).toBe(`${route}: 401`);
    expect(await statusOf(auth(none))).toBe(`${route}: 403`);
    for (const needed of rule)
      expect(`${await statusOf(auth(without.get(needed)!))} (without ${needed})`).toBe(
        `${route}: 403 (without ${needed})`,
      );
    if ((rule as readonly string[]).includes("platform.admin"))
      expect(`${await statusOf(auth(member))} (member)`).toBe(`${route}: 403 (member)`);
  }
});

test("an admin's sessions.read key cannot read /v1/vault or /v1/users; a no-permission key cannot list /v1/decisions", async ({
  request,
}) => {
  await patchSettings(request, { codeMode: { enabled: true } });
  const chat = await (await request.post("/v1/chats", { headers: admin, data: { title: "decisions to list" } })).json();
  const run = await request.post(`/v1/chats/${chat.id}/code-runs`, {
    headers: admin,
    data: {
      code: `return await apps.email.send_email({ to: "team@example.com", subject: "CODE-MARKER-77", body: "hi" })`,
    },
  });
  expect((await run.json()).status).toBe("Waiting");
  const listed = await request.get("/v1/decisions?status=pending", { headers: admin });
  expect(JSON.stringify(await listed.json())).toContain("CODE-MARKER-77");

  const reader = await keyFor(request, "admin", ["sessions.read"]);
  expect((await request.get("/v1/chats", { headers: auth(reader) })).status()).toBe(200);
  for (const url of ["/v1/vault", "/v1/users", "/v1/platform/settings", "/v1/decisions"]) {
    const r = await request.get(url, { headers: auth(reader) });
    expect(`${url}: ${r.status()}`).toBe(`${url}: 403`);
  }
  const none = await keyFor(request, "admin", []);
  const decisions = await request.get("/v1/decisions?status=pending", { headers: auth(none) });
  expect(decisions.status()).toBe(403);
  const text = await decisions.text();
  expect(text).toContain("apps.use");
  expect(text).not.toContain("CODE-MARKER-77");
  const me = await request.get("/api/trpc/auth.me", { headers: auth(reader) });
  expect((await me.json()).result.data.permissions).toEqual(["sessions.read"]);
});

test("a member's key cannot be created with platform.admin", async ({ request }) => {
  const user = await (
    await request.post("/v1/users", { headers: admin, data: { name: "Ambitious", role: "member" } })
  ).json();
  const r = await request.post("/v1/api-keys", {
    headers: admin,
    data: { userId: user.id, name: "too much", permissions: ["platform.admin"] },
  });
  expect(r.status()).toBe(400);
  expect((await r.json()).error.message).toContain("a member cannot hold platform.admin");
});

test("the outbox page's read passes the list-sent policy: deny refuses member and admin; without apps.use refused", async ({
  request,
}) => {
  const member = await keyFor(request, "member", ["apps.use", "sessions.read", "sessions.write"]);
  const outbox = (h: Headers) => request.get("/api/trpc/connections.emailOutbox", { headers: h });
  expect((await outbox(auth(member))).status()).toBe(200);
  const policy = (p: string) =>
    request.patch("/v1/connections/conn_email/policies", { headers: admin, data: { "list-sent": p } });
  expect((await policy("deny")).status()).toBe(200);
  try {
    for (const h of [auth(member), admin]) {
      const r = await outbox(h);
      expect(r.status()).toBe(403);
      expect((await r.json()).error.message).toContain("denies this call");
    }
    expect((await policy("ask")).status()).toBe(200);
    const asked = await outbox(auth(member));
    expect(asked.status()).toBe(403);
    expect((await asked.json()).error.message).toContain("run it from a chat");
  } finally {
    await policy("allow");
  }
  const noApps = await keyFor(request, "member", ["sessions.read", "sessions.write"]);
  expect((await outbox(auth(noApps))).status()).toBe(403);
});

const SECRET = "e2e_LaunderMe_5c81f0aa";

async function finished(request: APIRequestContext, runId: string, headers: Headers) {
  let record: { status: string; result: { value?: unknown } | null } = { status: "Running", result: null };
  await expect
    .poll(async () => {
      record = await (await request.get(`/v1/code-runs/${runId}`, { headers })).json();
      return record.status;
    })
    .not.toMatch(/Running|Waiting/);
  return record;
}

test("a vault secret written into Notes and read back (same run, later run) comes back hidden", async ({ request }) => {
  await patchSettings(request, { codeMode: { enabled: true } });
  const created = await request.post("/v1/vault", {
    headers: admin,
    data: { name: "launder/token", secret: SECRET, allow: [{ connection: "notes", tool: "write-note" }] },
  });
  expect(created.status()).toBe(201);
  expect((await created.json()).usableBy).toEqual({ users: [], roles: ["admin"] });
  const chat = await (await request.post("/v1/chats", { headers: admin, data: { title: "launder" } })).json();
  const run = await (
    await request.post(`/v1/chats/${chat.id}/code-runs`, {
      headers: admin,
      data: {
        code: `const w = await apps.notes.write_note({ title: "launder", body: "t=" + vault.launder.token })
const r = await apps.notes.read_note({ id: w.structuredContent.id })
return { id: w.structuredContent.id, body: r.structuredContent.body }`,
      },
    })
  ).json();
  expect(run.status).toBe("Waiting");
  const [decision] = await (
    await request.get(`/v1/decisions?status=pending&chatId=${chat.id}`, { headers: admin })
  ).json();
  expect(
    (await request.post(`/v1/decisions/${decision.id}`, { headers: admin, data: { decision: "allow" } })).status(),
  ).toBe(200);
  const done = await finished(request, run.id, admin);
  expect(done.status).toBe("Completed");
  const value = done.result!.value as { id: string; body: string };
  expect(value.body).toBe("t=⟦hidden:launder/token⟧");
  expect(JSON.stringify(done)).not.toContain(SECRET);

  const later = await (
    await request.post(`/v1/chats/${chat.id}/code-runs`, {
      headers: admin,
      data: { code: `return (await apps.notes.read_note({ id: ${JSON.stringify(value.id)} })).structuredContent.body` },
    })
  ).json();
  expect(later.status).toBe("Completed");
  expect(later.result.value).toBe("t=⟦hidden:launder/token⟧");
  expect(JSON.stringify(later)).not.toContain(SECRET);

  const short = await request.post("/v1/vault", { headers: admin, data: { name: "short/one", secret: "abc" } });
  expect(short.status()).toBe(400);
  expect((await short.json()).error.message).toContain("secret must be at least 8 characters");
  const spaces = await request.post("/v1/vault", { headers: admin, data: { name: "spaces/one", secret: "        " } });
  expect(spaces.status()).toBe(400);
  expect((await spaces.json()).error.message).toContain("secret must have at least 4 different characters");
});

test("an admin-only entry: a member neither sees nor uses it; once it names the member, they can", async ({
  request,
}) => {
  const member = await keyFor(request, "member", ["apps.use", "sessions.read", "sessions.write"]);
  const chat = await (
    await request.post("/v1/chats", { headers: auth(member), data: { title: "member vault" } })
  ).json();
  const code = `const names = Object.keys(vault)
try {
  await apps.notes.write_note({ title: "x", body: "⟦vault:launder/token⟧" })
  return { names, sent: true }
} catch (error) {
  return { names, name: error.name }
}`;
  const refused = await (
    await request.post(`/v1/chats/${chat.id}/code-runs`, { headers: auth(member), data: { code } })
  ).json();
  expect(refused.result.value.name).toBe("VaultDenied");
  expect(refused.result.value.names).not.toContain("launder");
  expect(refused.calls[0].app).toBeNull();

  const bad = await request.patch("/v1/vault/launder/token", {
    headers: admin,
    data: { usableBy: { roles: ["owner"] } },
  });
  expect(bad.status()).toBe(400);
  expect((await bad.json()).error.message).toContain("usableBy.roles");
  const ok = await request.patch("/v1/vault/launder/token", {
    headers: admin,
    data: { usableBy: { roles: ["admin"], users: [member.userId] } },
  });
  expect(ok.status()).toBe(200);

  const allowed = await (
    await request.post(`/v1/chats/${chat.id}/code-runs`, { headers: auth(member), data: { code } })
  ).json();
  expect(allowed.status).toBe("Waiting");
  const names = await (
    await request.post(`/v1/chats/${chat.id}/code-runs`, {
      headers: auth(member),
      data: { code: "return Object.keys(vault)" },
    })
  ).json();
  expect(names.result.value).toContain("launder");
  const [decision] = await (
    await request.get(`/v1/decisions?status=pending&chatId=${chat.id}`, { headers: auth(member) })
  ).json();
  expect(decision.request.app.arguments).toEqual({ title: "x", body: "⟦vault:launder/token⟧" });
  expect((await request.get("/v1/vault", { headers: auth(member) })).status()).toBe(403);
});

test("a failed connection's error: the admin's hides its env values and the vault's secrets, a member reads no diagnosis", async ({
  request,
}) => {
  const ENV_SECRET = "e2e-envsecret-3c9d";
  const ARG = "e2e-argsecret-71aa";
  const added = await request.post("/v1/connections", {
    headers: admin,
    data: {
      name: "Leaky e2e",
      transport: {
        type: "stdio",
        command: "sh",
        args: ["-c", 'echo "pw=$PW arg=$0" >&2; exit 3', ARG],
        env: { PW: ENV_SECRET },
      },
    },
  });
  expect(added.status()).toBe(201);
  const { id } = await added.json();
  const view = async (headers: Headers) =>
    (
      (await (await request.get("/v1/connections", { headers })).json()) as {
        id: string;
        status: string;
        error?: string;
      }[]
    ).find((c) => c.id === id)!;
  await expect.poll(async () => (await view(admin)).status, { timeout: 20_000 }).toBe("failed");
  expect((await view(admin)).error).toContain(`. Its last output: pw=•••• arg=${ARG}`);
  const member = await keyFor(request, "member", ["apps.use", "sessions.read"]);
  const seen = await view(auth(member));
  expect(seen.error).toBe("This App is not available now; an admin can see why in Admin · Apps.");
  const text = await (await request.get("/v1/connections", { headers: auth(member) })).text();
  expect(text).not.toContain(ENV_SECRET);
  expect(text).not.toContain(ARG);
  expect((await request.delete(`/v1/connections/${id}`, { headers: admin })).status()).toBe(200);
});

test("the model's stored key is not sent to a new provider or base URL; a base URL must be http(s)", async ({
  request,
}) => {
  const settings = async () =>
    (await (await request.get("/v1/platform/settings", { headers: admin })).json()) as {
      version: number;
      model: { apiKeySet: boolean } | null;
    };
  const save = async (model: Record<string, unknown> | null) =>
    request.patch("/v1/platform/settings", {
      headers: admin,
      data: { expectedVersion: (await settings()).version, model },
    });
  const local = { provider: "openai-compatible", baseURL: "http://127.0.0.1:9/v1", model: "m" };
  expect((await (await save({ ...local, apiKey: "sk-e2e-local-1234" })).json()).model.apiKeySet).toBe(true);
  const moved = await save({ ...local, baseURL: "http://127.0.0.1:10/v1" });
  expect(moved.status()).toBe(200);
  expect((await moved.json()).model.apiKeySet).toBe(false);
  const bad = await save({ ...local, baseURL: "file:///etc/passwd" });
  expect(bad.status()).toBe(400);
  expect((await bad.json()).error.message).toContain("model.baseURL must be an http(s) URL");
  const tested = await request.post("/v1/platform/model-test", { headers: admin, data: {} });
  expect(tested.status()).toBe(200);
  expect((await save(null)).status()).toBe(200);
});

test("Admin → Vault: an admin sets who may use an entry (roles and people)", async ({ page, request }) => {
  const person = await keyFor(request, "member", ["apps.use"]);
  const personName = person.name;
  await signIn(page);
  await page.getByRole("link", { name: "Admin · Vault" }).click();
  await page.getByLabel("Name", { exact: true }).fill("ui/shared");
  await page.getByLabel("Secret", { exact: true }).fill("ui_SharedSecret_0042");
  const form = page.getByRole("form", { name: "Add a secret" });
  await form.getByLabel("Members").check();
  await page.getByRole("button", { name: "Add secret" }).click();
  const row = page.getByTestId("vault-entry").filter({ hasText: "ui/shared" });
  await expect(row.getByTestId("vault-usable-by")).toHaveText("Admins, Members");

  await row.getByRole("button", { name: "Change who may use ui/shared" }).click();
  const editor = row.getByRole("form", { name: "Who may use ui/shared" });
  await editor.getByLabel("Members").uncheck();
  await editor.getByLabel("People").selectOption({ label: `${personName} (member)` });
  await editor.getByRole("button", { name: "Save" }).click();
  await expect(row.getByTestId("vault-usable-by")).toHaveText(`Admins, ${personName}`);
  const entries = (await (await request.get("/v1/vault", { headers: admin })).json()) as {
    name: string;
    usableBy: unknown;
  }[];
  expect(entries.find((e) => e.name === "ui/shared")?.usableBy).toEqual({ roles: ["admin"], users: [person.userId] });
});

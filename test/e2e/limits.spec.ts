/**
 * Limits against the built server (issue 10, findings 8, 9 and 11e): a page's end-of-run report is
 * bounded by what the run can have; server-side runs beyond the caps queue (Queued) or are refused
 * with 429; the settings show the caps; a value nested 4,000 deep leaves the page alive with a depth cut.
 */
import { type APIRequestContext, expect, test } from "@playwright/test";
import { admin, newChat, patchSettings, signIn } from "./helpers";

async function trpc(request: APIRequestContext, path: string, input: unknown) {
  const r = await request.post(`/api/trpc/${path}`, {
    headers: { ...admin, "content-type": "application/json" },
    data: input,
  });
  return { status: r.status(), body: await r.json() };
}

test.beforeAll(async ({ request }) => {
  await patchSettings(request, { codeMode: { enabled: true } });
});

test("a 100,000-entry completion order is refused with 400 naming the field; nothing is stored", async ({
  request,
}) => {
  const chat = await (await request.post("/v1/chats", { headers: admin, data: { title: "bounds" } })).json();
  const started = await trpc(request, "codeRuns.start", { chatId: chat.id, code: "return 1" });
  expect(started.status).toBe(200);
  const { runId, attempt } = started.body.result.data.ticket;
  for (const index of [0, 1]) {
    const call = await trpc(request, "codeRuns.appCall", {
      runId,
      attempt,
      index,
      binding: "work_calendar.list_events",
      argsJson: '{"day":"2026-10-23"}',
    });
    expect(call.body.result.data.type).toBe("ok");
  }
  const completionOrder = Array.from({ length: 100_000 }, (_, i) => i % 2);
  const finish = await trpc(request, "codeRuns.finish", {
    runId,
    attempt,
    outcome: { status: "completed", valueJson: "1", logs: [], output: [], completionOrder },
  });
  expect(finish.status).toBe(400);
  expect(finish.body.error.message).toContain("outcome.completionOrder");
  expect(finish.body.error.message).toContain("2 calls");
  const record = await (await request.get(`/v1/code-runs/${runId}`, { headers: admin })).json();
  expect(record.status).toBe("Running");
  const ok = await trpc(request, "codeRuns.finish", {
    runId,
    attempt,
    outcome: { status: "completed", valueJson: "1", logs: [], output: [], completionOrder: [1, 0] },
  });
  expect(ok.status).toBe(200);
  expect(ok.body.result.data.status).toBe("Completed");
});

test("server runs beyond the per-person cap queue (shown as Queued), beyond the queue bound they are refused with 429", async ({
  request,
}) => {
  await patchSettings(request, { codeMode: { timeoutMs: 2000, maxServerRunsPerUser: 1, maxQueuedRunsPerUser: 1 } });
  try {
    const chat = await (await request.post("/v1/chats", { headers: admin, data: { title: "caps" } })).json();
    const start = () =>
      request.post(`/v1/chats/${chat.id}/code-runs`, { headers: admin, data: { code: "for (;;) {}", reason: "spin" } });
    const responses = Promise.all([start(), start(), start(), start()]);
    await expect
      .poll(async () => {
        const runs = (await (await request.get(`/v1/chats/${chat.id}/code-runs`, { headers: admin })).json()) as {
          status: string;
        }[];
        return runs.map((r) => r.status).sort();
      })
      .toEqual(["Queued", "Running"]);
    const done = await responses;
    const statuses = done.map((r) => r.status()).sort();
    expect(statuses).toEqual([200, 200, 429, 429]);
    for (const r of done) {
      const body = await r.json();
      if (r.status() === 429) {
        expect(body.error.code).toBe("TOO_MANY_REQUESTS");
        expect(body.error.message).toContain("waiting to run on the server");
      } else {
        expect(body.result).toMatchObject({ _tag: "Failed", reason: "Timeout" });
      }
    }
    const runs = (await (await request.get(`/v1/chats/${chat.id}/code-runs`, { headers: admin })).json()) as unknown[];
    expect(runs).toHaveLength(2);
  } finally {
    await patchSettings(request, { codeMode: { timeoutMs: 10000, maxServerRunsPerUser: 2, maxQueuedRunsPerUser: 16 } });
  }
});

test("a queued run shows as Queued on its card and in the runs filter, and can be cancelled before it starts", async ({
  page,
  request,
}) => {
  await patchSettings(request, { codeMode: { timeoutMs: 30000, maxServerRunsPerUser: 1, maxQueuedRunsPerUser: 4 } });
  try {
    await signIn(page);
    const chatId = await newChat(page);
    const statusOf = async (reason: string) => {
      const runs = (await (await request.get(`/v1/chats/${chatId}/code-runs`, { headers: admin })).json()) as {
        reason: string;
        status: string;
      }[];
      return runs.find((r) => r.reason === reason)?.status;
    };
    const start = (reason: string) =>
      request.post(`/v1/chats/${chatId}/code-runs`, { headers: admin, data: { code: "for (;;) {}", reason } });
    const first = start("first spin");
    await expect.poll(() => statusOf("first spin")).toBe("Running");
    const second = start("second spin");
    await expect.poll(() => statusOf("second spin")).toBe("Queued");
    await page.reload();
    await expect(page.getByTestId("run-card").filter({ hasText: "first spin" })).toHaveAttribute(
      "data-status",
      "Running",
    );
    const queued = page.getByTestId("run-card").filter({ hasText: "second spin" });
    await expect(queued).toHaveAttribute("data-status", "Queued");
    await expect(queued.getByTestId("run-status")).toHaveText("Queued");
    await expect(queued.getByTestId("run-queued")).toContainText("Waiting for a free place on the server runner");
    await queued.getByRole("button", { name: "Cancel run" }).click();
    await expect(queued).toHaveAttribute("data-status", "Cancelled");
    expect((await (await second).json()).status).toBe("Cancelled");
    await page
      .getByTestId("run-card")
      .filter({ hasText: "first spin" })
      .getByRole("button", { name: "Cancel run" })
      .click();
    expect((await (await first).json()).status).toBe("Cancelled");
    await page.getByRole("link", { name: "All code runs" }).click();
    await expect(page.getByLabel("Status filter").locator("option", { hasText: "Queued" })).toHaveCount(1);
  } finally {
    await patchSettings(request, { codeMode: { timeoutMs: 10000, maxServerRunsPerUser: 2, maxQueuedRunsPerUser: 16 } });
  }
});

test("the caps are settings: shown in Admin · Settings with their ranges, out-of-range values named", async ({
  page,
  request,
}) => {
  const bad = await request.patch("/v1/platform/settings", {
    headers: admin,
    data: {
      expectedVersion: (await (await request.get("/v1/platform/settings", { headers: admin })).json()).version,
      codeMode: { maxServerRuns: 0 },
    },
  });
  expect(bad.status()).toBe(400);
  expect((await bad.json()).error.message).toContain("codeMode.maxServerRuns");
  await signIn(page);
  await page.getByRole("link", { name: "Admin · Settings" }).click();
  await expect(page.getByLabel("Server runs at once")).toHaveValue("4");
  await expect(page.getByLabel("Server runs per person")).toHaveValue("2");
  await expect(page.getByLabel("Queued runs per person")).toHaveValue("16");
  await page.getByLabel("Server runs at once").fill("65");
  await expect(page.getByText("Server runs at once must be between 1 and 64")).toBeVisible();
});

test("a value nested 4,000 levels deep leaves the page alive and shows a depth cut with bounded raw JSON", async ({
  page,
  request,
}) => {
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  let crashed = false;
  page.on("crash", () => {
    crashed = true;
  });
  await signIn(page);
  const chatId = await newChat(page);
  // The server runner builds the value (Chromium's worker stack is too small to serialise it there);
  // the chat page shows the run as it ends.
  const deep = "let a = { leaf: true }; for (let i = 0; i < 4000; i++) a = { next: a }; return a;";
  const run = await request.post(`/v1/chats/${chatId}/code-runs`, {
    headers: admin,
    data: { code: deep, reason: "deep value" },
  });
  expect(run.status()).toBe(200);
  expect((await run.json()).status).toBe("Completed");
  const card = page.getByTestId("run-card").filter({ hasText: "deep value" });
  await expect(card.getByTestId("run-status")).toHaveText("Completed");
  const cut = card.getByTestId("json-depth-cut");
  await expect(cut).toHaveCount(1);
  await expect(cut).toContainText("… deeper levels not shown");
  // Levels below the second start folded: unfold them all, as a reader clicking down would.
  await card
    .getByTestId("run-value")
    .locator("details")
    .evaluateAll((all) => {
      for (const d of all) (d as HTMLDetailsElement).open = true;
    });
  await expect(cut).toBeVisible();
  await cut.getByRole("button", { name: "Show raw JSON" }).click();
  const raw = cut.getByTestId("json-raw");
  await expect(raw).toContainText('{"next":{"next":');
  await expect(raw).toContainText("more characters not shown");
  expect(((await raw.textContent()) ?? "").length).toBeLessThan(21_000);
  expect(await page.evaluate(() => document.querySelectorAll("details").length)).toBeLessThan(100);
  // The page still works: a program runs in its worker and shows its value.
  await page.getByRole("textbox", { name: "Program" }).fill("return 6 * 7");
  await page.getByRole("button", { name: "Run program" }).click();
  await expect(page.getByTestId("run-value").filter({ hasText: "42" })).toBeVisible();
  expect(crashed).toBe(false);
  expect(errors).toEqual([]);
});

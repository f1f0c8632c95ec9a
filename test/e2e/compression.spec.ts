/**
 * Response compression of the built server (scripts/server.mjs): the REST API is answered uncompressed
 * to a peer on this host (the tests' client is on loopback) even when it accepts gzip, while pages stay
 * compressed for it.
 */
import { expect, test } from "@playwright/test";
import { admin } from "./helpers";

const gzip = { "Accept-Encoding": "gzip" };

test("a /v1 JSON answer to a loopback peer is not compressed, though it is large enough and gzip is accepted", async ({
  request,
}) => {
  const r = await request.get("/v1/connections", { headers: { ...admin, ...gzip } });
  expect(r.status()).toBe(200);
  expect(r.headers()["content-type"]).toContain("application/json");
  // Over the compression middleware's 1 KB threshold: it would have been gzipped before.
  expect((await r.body()).length).toBeGreaterThan(1024);
  expect(r.headers()["content-encoding"]).toBeUndefined();
});

test("a page is still compressed for the same peer", async ({ request }) => {
  const r = await request.get("/", { headers: gzip });
  expect(r.status()).toBe(200);
  expect(r.headers()["content-type"]).toContain("text/html");
  expect(r.headers()["content-encoding"]).toBe("gzip");
});

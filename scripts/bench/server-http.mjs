/**
 * HTTP helpers the benchmarks share when they drive a built server: one JSON request with a bearer token
 * (the answer's JSON, or its first 200 characters when it is not JSON), and the wait for `/v1/health`.
 */

import http from "node:http";

/**
 * The benchmarks' client shares the server's two cores, so it is kept lean: node:http on kept-alive
 * connections instead of fetch (whose web streams cost the client ~2-3× the CPU per request), and answers
 * asked uncompressed (`accept-encoding: identity`: a client on loopback gains nothing from gzip, which
 * costs the server and the client CPU per answer). A request on a kept-alive socket that the server closed
 * as it was reused fails before the server read it, and is sent once more (Node's documented pattern).
 */
const agent = new http.Agent({ keepAlive: true, maxSockets: 1024, timeout: 4_000 });

function send(url, token, method, payload) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          "accept-encoding": "identity",
          ...(payload === undefined
            ? {}
            : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        const chunks = [];
        res.on("data", (chunk) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.on("error", (error) => {
      error.reusedSocket = req.reusedSocket;
      reject(error);
    });
    req.end(payload);
  });
}

export async function apiRequest(base, token, method, route, body) {
  const url = new URL(route, base);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const r = await send(url, token, method, payload).catch((error) => {
    if (error.reusedSocket && error.code === "ECONNRESET") return send(url, token, method, payload);
    throw error;
  });
  let json;
  try {
    json = JSON.parse(r.text);
  } catch {
    json = { raw: r.text.slice(0, 200) };
  }
  return { status: r.status, json };
}

/** Waits until `base` answers `/v1/health` (every 200 ms, `tries` times); fails if `child` exits first. */
export async function waitForHealth(base, child, tries) {
  for (let i = 0; i < tries; i++) {
    if (child.exitCode !== null) throw new Error(`the server at ${base} exited before it was ready`);
    try {
      if ((await fetch(`${base}/v1/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`the server at ${base} did not become healthy`);
}

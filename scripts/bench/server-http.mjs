/**
 * HTTP helpers the benchmarks share when they drive a built server: one JSON request with a bearer token
 * (the answer's JSON, or its first 200 characters when it is not JSON), and the wait for `/v1/health`.
 */

export async function apiRequest(base, token, method, route, body) {
  const r = await fetch(`${base}${route}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = { raw: text.slice(0, 200) };
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

// Serves the built app on HOST:PORT (default 127.0.0.1:3000) from one process we control, so SIGTERM and
// SIGINT close runs, MCP children and the database before the process exits.
import { createServer, request } from "node:http";
import next from "next";

const host = process.env.HOST || "127.0.0.1";
const port = Number(process.env.PORT || 3000);
process.env.NEXT_TELEMETRY_DISABLED = "1";

const app = next({ dev: false, hostname: host, port, dir: process.cwd() });
const handle = app.getRequestHandler();
await app.prepare();

// The app reads the client's address from this header (sign-in rate limit); set from the socket, never
// taken from the client.
const server = createServer((req, res) => {
  req.headers["x-openbot-peer"] = req.socket.remoteAddress ?? "";
  // A path whose %-escapes are not UTF-8 (`%C0%80`, a lone surrogate) names nothing; Next would answer a
  // bare 500 for it, so it is refused here in the API's error shape.
  if (!decodablePath(req.url ?? "/")) {
    res.writeHead(400, { "content-type": "application/json", "cache-control": "no-store" });
    res.end(
      JSON.stringify({
        error: { code: "BAD_REQUEST", message: "The request path is not valid percent-encoded UTF-8." },
      }),
    );
    return;
  }
  if ((req.url ?? "").startsWith("/v1/")) explainMethodNotAllowed(req, res);
  handle(req, res);
});

/**
 * Next answers a method a route does not export with a bare 405 (no body, no `Allow`). For the API, that
 * answer is replaced by one in the API's error shape that names the methods the path takes, which Next's
 * own OPTIONS answer lists (asked over loopback, only on this error path).
 */
function explainMethodNotAllowed(req, res) {
  const writeHead = res.writeHead.bind(res);
  const write = res.write.bind(res);
  const end = res.end.bind(res);
  let refused = false;
  res.writeHead = (status, ...rest) => {
    if (status === 405) {
      refused = true;
      return res;
    }
    return writeHead(status, ...rest);
  };
  res.write = (...args) => (refused || res.statusCode === 405 ? true : write(...args));
  res.end = (...args) => {
    if (!refused && res.statusCode !== 405) return end(...args);
    allowedMethods(req.url ?? "/").then((allow) => {
      const path = (req.url ?? "/").split("?")[0];
      const methods = allow.filter((m) => m !== "HEAD" && m !== "OPTIONS");
      writeHead(405, {
        "content-type": "application/json",
        "cache-control": "no-store",
        ...(allow.length ? { allow: allow.join(", ") } : {}),
      });
      end(
        JSON.stringify({
          error: {
            code: "METHOD_NOT_ALLOWED",
            message: `${req.method} is not allowed on ${path}${methods.length ? `: it takes ${methods.join(", ")}` : ""}.`,
          },
        }),
      );
    });
    return res;
  };
}

function allowedMethods(url) {
  return new Promise((resolve) => {
    // Where this server listens: a wildcard address is reached on loopback.
    const { address, port: listening } = server.address();
    const target = address === "0.0.0.0" ? "127.0.0.1" : address === "::" ? "::1" : address;
    const ask = request({ host: target, port: listening, method: "OPTIONS", path: url }, (reply) => {
      reply.resume();
      const allow = String(reply.headers.allow ?? "");
      resolve(allow ? allow.split(/\s*,\s*/).filter(Boolean) : []);
    });
    ask.on("error", () => resolve([]));
    ask.setTimeout(5000, () => ask.destroy());
    ask.end();
  });
}

function decodablePath(url) {
  const path = url.split("?")[0];
  if (!path.includes("%")) return true;
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}
server.listen(port, host, () => console.log(`OpenBot is serving http://${host}:${port}`));

let stopping = false;
async function stop(signal) {
  if (stopping) return;
  stopping = true;
  console.log(`${signal}: stopping OpenBot…`);
  const force = setTimeout(() => process.exit(1), 10_000);
  force.unref();
  server.close();
  server.closeAllConnections?.();
  const hook = globalThis[Symbol.for("openbot.shutdown")];
  try {
    if (typeof hook === "function") await hook();
  } catch (error) {
    console.error("shutdown failed:", error);
  }
  process.exit(0);
}
process.on("SIGTERM", () => void stop("SIGTERM"));
process.on("SIGINT", () => void stop("SIGINT"));

// Serves the built app on HOST:PORT (default 127.0.0.1:3000) from one process we control, so SIGTERM and
// SIGINT close runs, MCP children and the database before the process exits.
import { createServer } from "node:http";
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
  handle(req, res);
});

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

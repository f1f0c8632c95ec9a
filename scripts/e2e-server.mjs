// The server for the Playwright suite: a fresh data dir every run, then the built app.
import { rmSync } from "node:fs";

rmSync(process.env.OPENBOT_DATA_DIR ?? "test-results/e2e-data", { recursive: true, force: true });
await import("./server.mjs");

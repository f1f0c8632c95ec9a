// Builds the sandbox worker bundle and the Next app when the source changed since the last build.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { sourceFingerprint } from "./fingerprint.mjs";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

export function buildIfNeeded() {
  const stamp = path.join(root, ".next", "openbot-fingerprint");
  const current = sourceFingerprint(root);
  const built =
    existsSync(stamp) && existsSync(path.join(root, ".next", "BUILD_ID")) ? readFileSync(stamp, "utf8").trim() : "";
  if (built === current && existsSync(path.join(root, "dist", "worker", "node-worker.mjs"))) return;
  console.log("Building OpenBot (the source changed since the last build)…");
  const run = (args) => {
    const r = spawnSync(process.execPath, args, {
      cwd: root,
      stdio: "inherit",
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
    });
    if (r.status !== 0) process.exit(r.status ?? 1);
  };
  run(["scripts/build-worker.mjs"]);
  run(["node_modules/next/dist/bin/next", "build"]);
  writeFileSync(stamp, `${current}\n`);
}

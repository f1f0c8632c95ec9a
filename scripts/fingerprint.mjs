// A content hash of everything `next build` reads, so `npm start` rebuilds only when the source changed.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

const ROOTS = [
  "app",
  "server",
  "worker",
  "contracts",
  "public",
  "instrumentation.ts",
  "next.config.ts",
  "tsconfig.json",
  "package-lock.json",
  "scripts/build-worker.mjs",
];

export function sourceFingerprint(root) {
  const hash = createHash("sha256");
  const walk = (rel) => {
    const abs = path.join(root, rel);
    if (!existsSync(abs)) return;
    const stat = statSync(abs);
    if (stat.isDirectory()) {
      for (const name of readdirSync(abs).sort()) walk(path.join(rel, name));
    } else {
      hash.update(rel).update("\0").update(readFileSync(abs)).update("\0");
    }
  };
  for (const r of ROOTS) walk(r);
  return hash.digest("hex");
}

import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    alias: {
      "@": fileURLToPath(new URL("./", import.meta.url)),
      "server-only": fileURLToPath(new URL("./test/helpers/server-only.ts", import.meta.url)),
    },
  },
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/e2e/**", "node_modules/**"],
    environment: "node",
    globalSetup: ["test/global-setup.ts"],
    env: { OPENBOT_LOG: process.env.OPENBOT_LOG ?? "silent" },
    // Room for a CI machine that runs ~2.5× slower than this kind of machine (seen: the on-disk initdb of
    // bootstrap.test.ts took over 30 s there). Limits only matter when a test hangs; none measures speed.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    fileParallelism: true,
    maxWorkers: 2,
  },
});

import { defineConfig } from "@playwright/test";

const port = Number(process.env.OPENBOT_E2E_PORT ?? 3100);
export const E2E_ADMIN_TOKEN = "obk_e2e-admin-token-for-tests-only";
export const stubPort = Number(process.env.OPENBOT_E2E_STUB_PORT ?? 3199);
export const STUB_URL = `http://127.0.0.1:${stubPort}/v1`;

export default defineConfig({
  testDir: "test/e2e",
  timeout: 60_000,
  expect: { timeout: 15_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  reporter: [["list"]],
  outputDir: "test-results/playwright",
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: process.env.OPENBOT_CHROMIUM || "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
  webServer: [
    {
      command: "node scripts/openai-stub.mjs",
      url: `http://127.0.0.1:${stubPort}/v1/models`,
      timeout: 30_000,
      reuseExistingServer: false,
      env: { OPENBOT_STUB_PORT: String(stubPort) },
    },
    {
      command: "node scripts/e2e-server.mjs",
      url: `http://127.0.0.1:${port}/v1/health`,
      timeout: 120_000,
      reuseExistingServer: false,
      stdout: "pipe",
      stderr: "pipe",
      env: {
        PORT: String(port),
        HOST: "127.0.0.1",
        OPENBOT_DATA_DIR: "test-results/e2e-data",
        OPENBOT_ADMIN_TOKEN: E2E_ADMIN_TOKEN,
      },
    },
  ],
});

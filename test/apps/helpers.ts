/**
 * Test helpers for the Apps layer: a migrated in-memory database with a registry over real MCP servers,
 * a free loopback port, the everything server in Streamable HTTP mode as a child process, and our own
 * HTTP fixtures (fixtures/*-server.mjs) started on a port of their choosing.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "vitest";
import { type AppCallError, AppRegistry, type AppRegistryOptions, isAppCallError } from "@/server/apps/registry";
import { type Db, openDb } from "@/server/db/client";
import { migrate } from "@/server/db/migrate";

export const ODD_SERVER = path.join(import.meta.dirname, "fixtures", "odd-server.mjs");
export const EVERYTHING = path.join(
  process.cwd(),
  "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);

export interface TestApps {
  db: Db;
  dataDir: string;
  registry: AppRegistry;
  /** A second registry over the same database (a restart). */
  restart(): Promise<AppRegistry>;
  close(): Promise<void>;
}

export async function startApps(options: Partial<AppRegistryOptions> = {}): Promise<TestApps> {
  const db = await openDb({});
  await migrate(db);
  const dataDir = mkdtempSync(path.join(tmpdir(), "openbot-apps-"));
  const registry = await AppRegistry.start({ db, dataDir, ...options });
  const others: AppRegistry[] = [];
  return {
    db,
    dataDir,
    registry,
    async restart() {
      const r = await AppRegistry.start({ db, dataDir, ...options });
      others.push(r);
      return r;
    },
    async close() {
      await Promise.allSettled([registry.close(), ...others.map((r) => r.close())]);
      await db.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Starts the everything server in Streamable HTTP mode on `port`; resolves when it accepts connections. */
export async function startEverythingHttp(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [EVERYTHING, "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.resume();
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the everything server did not start")), 15_000);
    child.once("exit", () => reject(new Error("the everything server exited")));
    child.stderr?.on("data", (chunk: Buffer) => {
      if (/listening on port/i.test(chunk.toString())) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  child.stderr?.resume();
  return child;
}

export const MODERN_SERVER = path.join(import.meta.dirname, "fixtures", "modern-server.mjs");

/**
 * Starts one of our HTTP fixture servers (`PORT=0`) and resolves with the port it prints
 * ("listening on port N" on stderr); rejects if it exits first.
 */
export async function startFixtureServer(
  file: string,
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [file], {
    env: { ...process.env, PORT: "0", ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once("exit", () => reject(new Error(`${path.basename(file)} exited before it listened`)));
    child.stderr?.on("data", (chunk: Buffer) => {
      const m = /listening on port (\d+)/.exec(chunk.toString());
      if (m) resolve(Number(m[1]));
    });
  });
  return { child, port };
}

export async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

export async function until<T>(probe: () => T | undefined | false, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The registry's entry for a binding; throws when it has none. */
export function entryOf(apps: AppRegistry, binding: string) {
  const e = apps.resolve(binding);
  if (!e) throw new Error(`no binding ${binding}`);
  return e;
}

/** The AppCallError a call fails with (the test fails if it does not fail with one). */
export async function failure(promise: Promise<unknown>): Promise<AppCallError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isAppCallError(error), String(error)).toBe(true);
  return error as AppCallError;
}

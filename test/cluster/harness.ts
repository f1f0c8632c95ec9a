/**
 * Built servers (`scripts/server.mjs`) on one Postgres behind a tiny round-robin loopback proxy, for the
 * multi-instance tests. Each cluster gets its own database on OPENBOT_TEST_DATABASE_URL's server; ports
 * are `OPENBOT_CLUSTER_PORT_BASE` (default 5300) plus the offsets the test file picks.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, rmSync } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import path from "node:path";
import pg from "pg";

export const baseUrl = process.env.OPENBOT_TEST_DATABASE_URL;
const built = existsSync(path.join(process.cwd(), ".next", "BUILD_ID"));
/** Why the cluster tests cannot run here ("" when they can). */
export const skipReason = !baseUrl
  ? "OPENBOT_TEST_DATABASE_URL is not set"
  : !built
    ? "the app is not built (npx next build)"
    : "";
export const PORT_BASE = Number(process.env.OPENBOT_CLUSTER_PORT_BASE ?? 5300);

export type Name = "a" | "b";

export interface Instance {
  name: Name;
  port: number;
  child: ChildProcess;
  log: () => string;
}

export interface Rec {
  id: string;
  status: string;
  result?: unknown;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false>,
  ms = 90_000,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await sleep(100);
  }
}

export interface Cluster {
  instances: Record<Name, Instance | undefined>;
  token: string;
  auth: { Authorization: string; "content-type": string };
  /** A client on the cluster's database (reconnect with `reconnectDb` after a Postgres restart). */
  db: () => pg.Client;
  reconnectDb(): Promise<void>;
  at(name: Name | "proxy"): string;
  api<T = Rec>(where: Name | "proxy", method: string, route: string, body?: unknown): Promise<T>;
  startInstance(name: Name): Promise<Instance>;
  close(): Promise<void>;
}

/** `offset`: this file's ports are PORT_BASE + offset (proxy), + 1 (a), + 2 (b). `env`: extra server env. */
export async function startCluster(offset: number, env: Record<string, string> = {}): Promise<Cluster> {
  const ports = { proxy: PORT_BASE + offset, a: PORT_BASE + offset + 1, b: PORT_BASE + offset + 2 };
  const token = `obt_${randomBytes(24).toString("hex")}`;
  const key = randomBytes(32).toString("hex");
  const auth = { Authorization: `Bearer ${token}`, "content-type": "application/json" };
  const dbName = `openbot_cluster_${randomBytes(5).toString("hex")}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  await admin.end();
  const url = new URL(baseUrl!);
  url.pathname = `/${dbName}`;
  const dbUrl = url.toString();
  const instances: Record<Name, Instance | undefined> = { a: undefined, b: undefined };
  let client: pg.Client | undefined;
  let proxy: Server | undefined;

  const startInstance = async (name: Name): Promise<Instance> => {
    const port = ports[name];
    const dataDir = path.join(process.cwd(), "test-results", `cluster-${offset}-${name}`);
    rmSync(dataDir, { recursive: true, force: true });
    const child = spawn(process.execPath, ["scripts/server.mjs"], {
      env: {
        ...process.env,
        PORT: String(port),
        HOST: "127.0.0.1",
        OPENBOT_DATA_DIR: dataDir,
        DATABASE_URL: dbUrl,
        OPENBOT_ADMIN_TOKEN: token,
        OPENBOT_ENCRYPTION_KEY: key,
        OPENBOT_LOG: "",
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let log = "";
    child.stdout!.on("data", (d) => (log += d));
    child.stderr!.on("data", (d) => (log += d));
    for (;;) {
      if (child.exitCode !== null) throw new Error(`instance ${name} exited:\n${log}`);
      const up = await fetch(`http://127.0.0.1:${port}/v1/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (up) break;
      await sleep(200);
    }
    const instance = { name, port, child, log: () => log };
    instances[name] = instance;
    return instance;
  };

  const at = (name: Name | "proxy") => `http://127.0.0.1:${name === "proxy" ? ports.proxy : instances[name]!.port}`;

  /** Round-robin over the live instances, as a load balancer would. */
  const startProxy = (): Promise<Server> => {
    let next = 0;
    const server = createServer((req, res) => {
      const live = Object.values(instances).filter(
        (i): i is Instance => !!i && i.child.exitCode === null && !i.child.signalCode,
      );
      const target = live[next++ % live.length]!;
      const out = httpRequest(
        { host: "127.0.0.1", port: target.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      out.on("error", () => res.writeHead(502).end());
      req.pipe(out);
    });
    return new Promise((resolve) => server.listen(ports.proxy, "127.0.0.1", () => resolve(server)));
  };

  const reconnectDb = async () => {
    await client?.end().catch(() => undefined);
    client = new pg.Client({ connectionString: dbUrl });
    client.on("error", () => undefined);
    await client.connect();
  };

  await startInstance("a");
  await startInstance("b");
  proxy = await startProxy();
  await reconnectDb();

  return {
    instances,
    token,
    auth,
    db: () => client!,
    reconnectDb,
    at,
    startInstance,
    async api<T = Rec>(where: Name | "proxy", method: string, route: string, body?: unknown): Promise<T> {
      const r = await fetch(`${at(where)}${route}`, {
        method,
        headers: auth,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await r.text();
      if (!r.ok) throw new Error(`${method} ${route} on ${where}: ${r.status} ${text}`);
      return text ? JSON.parse(text) : (undefined as T);
    },
    async close() {
      proxy?.close();
      for (const i of Object.values(instances)) {
        if (i && i.child.exitCode === null && !i.child.signalCode) {
          const exited = new Promise((r) => i.child.once("exit", r));
          i.child.kill("SIGTERM");
          await exited;
        }
      }
      await client?.end().catch(() => undefined);
      const admin = new pg.Client({ connectionString: baseUrl });
      await admin.connect();
      await admin.query(`drop database if exists ${dbName} with (force)`).catch(() => undefined);
      await admin.end();
    },
  };
}

/** Starts fixtures/tasks-server.mjs (a v2-SDK server with task-backed tools) and drives it over its control endpoints. */
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";

export const TASKS_FIXTURE = path.join(import.meta.dirname, "fixtures", "tasks-server.mjs");

export interface TasksStats {
  created: number;
  gets: number;
  cancelled: string[];
  updates: number;
  withoutExtension: number;
  states: Record<string, string>;
}

export async function startTasksServer(
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(process.execPath, [TASKS_FIXTURE], {
    env: { ...process.env, PORT: "0", ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once("exit", () => reject(new Error("the tasks server exited")));
    child.stderr?.on("data", (chunk: Buffer) => {
      const m = /listening on port (\d+)/.exec(chunk.toString());
      if (m) resolve(Number(m[1]));
    });
  });
  return { child, base: `http://127.0.0.1:${port}` };
}

export async function control(
  base: string,
  what: "complete" | "stats" | "status",
  message?: string,
): Promise<TasksStats> {
  const url = `${base}/control/${what}${message === undefined ? "" : `?message=${encodeURIComponent(message)}`}`;
  const res = await fetch(url, { method: what === "stats" ? "GET" : "POST" });
  return (await res.json()) as TasksStats;
}

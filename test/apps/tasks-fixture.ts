/** Starts fixtures/tasks-server.mjs (a v2-SDK server with task-backed tools) and drives it over its control endpoints. */
import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { startFixtureServer } from "./helpers";

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
  const { child, port } = await startFixtureServer(TASKS_FIXTURE, env);
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

/**
 * Runs once when the Next server starts: opens the platform (database, migrations, first admin token,
 * Apps) so the first request does not pay for it, and registers the shutdown hook the start script calls.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { startPlatform } = await import("./server/lifecycle");
  await startPlatform();
}

import { getPlatform } from "@/server/boot";
import { readiness } from "@/server/health";

export const dynamic = "force-dynamic";

/** Readiness (server/health.ts): 200 while the database answers, else 503. Public. */
export async function GET() {
  try {
    const ready = await readiness(await getPlatform());
    return Response.json(ready, { status: ready.ok ? 200 : 503, headers: { "cache-control": "no-store" } });
  } catch {
    return Response.json({ ok: false }, { status: 503 });
  }
}

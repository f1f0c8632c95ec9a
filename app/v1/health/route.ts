import { getPlatform } from "@/server/boot";

export const dynamic = "force-dynamic";

export async function GET() {
  try {
    const platform = await getPlatform();
    await platform.db.query("select 1");
    return Response.json({ ok: true, database: platform.db.kind });
  } catch {
    return Response.json({ ok: false }, { status: 503 });
  }
}

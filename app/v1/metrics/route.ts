import { guard } from "@/server/api/access";
import { rest } from "@/server/http/rest";
import { renderMetrics } from "@/server/metrics";

export const dynamic = "force-dynamic";
/** Prometheus text format; admins' keys only (contracts/access.ts). */
export const GET = rest(
  guard("GET /v1/metrics", async ({ ctx }) => {
    const { contentType, text } = await renderMetrics(ctx.platform);
    return new Response(text, { headers: { "content-type": contentType, "cache-control": "no-store" } });
  }),
);

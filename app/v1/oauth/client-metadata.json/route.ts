import { getPlatform } from "@/server/boot";
import { ownOrigin } from "@/server/http/origin";

export const dynamic = "force-dynamic";

/** OpenBot's OAuth Client ID Metadata Document: public, its URL is the client_id. */
export async function GET(req: Request) {
  const platform = await getPlatform();
  return Response.json(platform.oauth.clientMetadata(ownOrigin(req, platform.env)), {
    headers: { "cache-control": "public, max-age=300" },
  });
}

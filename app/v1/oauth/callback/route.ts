import { guard } from "@/server/api/access";
import { admit } from "@/server/http/boundary";
import { toPublicError } from "@/server/http/public-error";
import { HTTP_STATUS } from "@/server/services/errors";
import { finishOAuth } from "@/server/services/oauth";

export const dynamic = "force-dynamic";

/**
 * Where an authorization server sends the person back. It needs their session (the cookie goes along on
 * this top-level navigation) and completes only the sign-in they started; then back to the page it was
 * started from (a chat, as a validated relative path), else home.
 */
export async function GET(req: Request) {
  try {
    const admission = await admit(req, { anonymousAllowed: true, crossSite: true });
    if (!admission.ok) return page(HTTP_STATUS[admission.refusal.code], admission.refusal.message);
    // Anonymous callers are refused by guard (401) like on every other route.
    const query = new URL(req.url).searchParams;
    const done = (await guard("GET /v1/oauth/callback", ({ ctx }) => finishOAuth(ctx.platform, ctx.principal, query))({
      ctx: admission.ctx,
      req,
      params: {},
      body: undefined,
      query,
    })) as { connectionId: string; shared: boolean; returnTo: string | null };
    const next = done.shared ? "/admin/apps" : (done.returnTo ?? "/");
    return new Response(null, {
      status: 303,
      headers: { location: `${next}?oauth=connected&connection=${encodeURIComponent(done.connectionId)}` },
    });
  } catch (error) {
    const failure = toPublicError(error, "oauth_callback_failed");
    return page(failure.code === "INTERNAL" ? 500 : HTTP_STATUS[failure.code], failure.message);
  }
}

function page(status: number, message: string): Response {
  const text = message.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return new Response(
    `<!doctype html><meta charset="utf-8"><title>Sign-in failed</title><p role="alert">${text}</p><p><a href="/">Back to OpenBot</a></p>`,
    { status, headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" } },
  );
}

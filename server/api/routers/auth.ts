import "server-only";
import { z } from "zod";
import { requireAuth, SESSION_COOKIE, signIn, signOut } from "../../services/auth";
import { createTRPCRouter, publicProcedure } from "../trpc";

/** The session cookie: httpOnly, SameSite=Lax, and Secure whenever browsers reach the server over https. */
const cookie = (value: string, maxAge: number, secure: boolean) =>
  `${SESSION_COOKIE}=${encodeURIComponent(value)}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure ? "; Secure" : ""}`;

export const authRouter = createTRPCRouter({
  me: publicProcedure.query(({ ctx }) => {
    if (!ctx.principal) return null;
    const p = requireAuth(ctx.principal);
    return { userId: p.userId, name: p.userName, role: p.role, permissions: [...p.permissions] };
  }),
  signIn: publicProcedure
    .input(z.object({ token: z.string().min(1, "token is required") }))
    .mutation(async ({ ctx, input }) => {
      const { sessionId, principal, maxAgeSeconds } = await signIn(ctx.platform.db, input.token, ctx.clientAddress);
      ctx.responseCookies.push(cookie(sessionId, maxAgeSeconds, ctx.https));
      return { userId: principal.userId, name: principal.userName, role: principal.role };
    }),
  signOut: publicProcedure.mutation(async ({ ctx }) => {
    if (ctx.sessionId) await signOut(ctx.platform.db, ctx.sessionId);
    ctx.responseCookies.push(cookie("", 0, ctx.https));
    return { ok: true };
  }),
});

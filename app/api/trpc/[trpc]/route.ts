import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { appRouter } from "@/server/api/root";
import { type Context, createContextFromRequest } from "@/server/api/trpc";

export const dynamic = "force-dynamic";

function handler(req: Request) {
  let context: Context | undefined;
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    createContext: async () => {
      context = await createContextFromRequest(req);
      return context;
    },
    responseMeta: () => {
      const headers = new Headers();
      for (const c of context?.responseCookies ?? []) headers.append("set-cookie", c);
      return { headers };
    },
  });
}

export { handler as GET, handler as POST };

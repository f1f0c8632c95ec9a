"use client";
/**
 * The page's tRPC client and React Query provider. Queries and mutations use the options proxy
 * (`useTRPC()`); imperative calls from the run loop use the plain client (`useTRPCClient()`).
 */
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink } from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import { type ReactNode, useEffect, useState } from "react";
import type { AppRouter } from "@/server/api/root";

export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>();

export function Providers({ children }: { children: ReactNode }) {
  const [queryClient] = useState(
    () => new QueryClient({ defaultOptions: { queries: { staleTime: 2_000, retry: 1, refetchOnWindowFocus: false } } }),
  );
  const [trpcClient] = useState(() =>
    createTRPCClient<AppRouter>({
      links: [
        splitLink({
          condition: (op) => op.type === "subscription",
          true: httpSubscriptionLink({ url: "/api/trpc" }),
          false: httpBatchLink({ url: "/api/trpc", maxItems: 20 }),
        }),
      ],
    }),
  );
  useEffect(() => {
    // What the outbox delivers changes runs the page may have read already (and before its live updates were
    // subscribed): read them again once something was delivered.
    const flush = () =>
      void import("./outbox")
        .then(({ flushOutbox }) => flushOutbox(trpcClient))
        .then((delivered) => (delivered > 0 ? queryClient.invalidateQueries() : undefined))
        .catch(() => undefined);
    flush();
    window.addEventListener("online", flush);
    return () => window.removeEventListener("online", flush);
  }, [trpcClient, queryClient]);
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}

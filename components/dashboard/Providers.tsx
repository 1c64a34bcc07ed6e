"use client";
// The dashboard's one react-query client, for every page (the redrive pages
// included). Polling intervals are per query (usePolled);
// refetchIntervalInBackground stays false, so a hidden tab stops polling.
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { useState } from "react";

export function Providers({ children }: { children: React.ReactNode }) {
  const [client] = useState(
    () =>
      new QueryClient({
        defaultOptions: {
          queries: { refetchOnWindowFocus: true, retry: 1, staleTime: 2_000, refetchIntervalInBackground: false },
        },
      }),
  );
  return <QueryClientProvider client={client}>{children}</QueryClientProvider>;
}

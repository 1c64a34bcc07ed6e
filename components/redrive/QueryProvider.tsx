"use client";
// react-query for the redrive pages. The dashboard layout may already provide
// a client; a nested provider simply scopes these queries, so the pages work
// either way. Polling pauses while the tab is hidden (refetchIntervalInBackground).
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { useState } from "react";

export function RedriveQueryProvider({ children }: { children: React.ReactNode }) {
  const [client] = useState(
    () => new QueryClient({ defaultOptions: { queries: { retry: 1, staleTime: 1_000, refetchIntervalInBackground: false } } }),
  );
  return <QueryClientProvider client={client}>{children}</QueryClientProvider>;
}

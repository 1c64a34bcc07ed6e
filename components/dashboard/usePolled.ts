"use client";
// A react-query GET of a dashboard endpoint, seeded with the server page's data
// and refreshed every few seconds while the tab is visible.
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { apiFetch } from "@/lib/client/api";

const POLL_MS = 5_000;

export function usePolled<T>(url: string | null, opts: { initialData?: T; initialAt?: number; intervalMs?: number } = {}) {
  return useQuery<T>({
    queryKey: [url],
    queryFn: ({ signal }) => apiFetch<T>(url!, { signal }),
    enabled: url !== null,
    initialData: opts.initialData,
    initialDataUpdatedAt: opts.initialAt,
    refetchInterval: opts.intervalMs ?? POLL_MS,
    refetchIntervalInBackground: false,
    placeholderData: keepPreviousData,
  });
}

"use client";
import { ServerError } from "@/components/dashboard/ServerError";

// `retry`, not `reset`: a server component's failure is only undone by fetching the page again.
export default function DashboardError({ error, retry }: { error: unknown; retry: () => void }) {
  return <ServerError error={error} retry={retry} />;
}

"use client";
import { ErrorState } from "@/components/ui/kit";

export default function DashboardError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <div className="space-y-3">
      <h1 className="text-2xl font-semibold">Something went wrong</h1>
      <ErrorState error={error.digest ? new Error(`The server could not answer (reference ${error.digest}); the server log has the details.`) : error} retry={reset} />
    </div>
  );
}

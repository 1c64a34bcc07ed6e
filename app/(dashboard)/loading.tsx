import { Skeleton } from "@/components/ui/kit";

export default function Loading() {
  return (
    <div role="status" aria-label="Loading" className="space-y-6">
      <div className="h-7 w-48 animate-pulse rounded bg-slate-200" />
      <div className="rounded-lg border border-slate-200 bg-white p-4">
        <Skeleton lines={5} />
      </div>
      <span className="sr-only">Loading…</span>
    </div>
  );
}

"use client";
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { apiFetch } from "@/lib/client/api";
import type { RedriveBatchView } from "@/lib/redrive/service";
import { STATUS_STYLE, btnPrimary, card, describeFilter, fmtTime } from "@/components/redrive/ui";

export function RedriveBatchesClient({ initial, initialAt, canCreate }: { initial: RedriveBatchView[]; initialAt: number; canCreate: boolean }) {
  const q = useQuery<{ items: RedriveBatchView[] }>({
    queryKey: ["/api/v1/redrives?limit=100"],
    queryFn: ({ signal }) => apiFetch("/api/v1/redrives?limit=100", { signal }),
    initialData: { items: initial },
    initialDataUpdatedAt: initialAt,
    refetchInterval: (query) => (query.state.data?.items.some((b) => b.status === "running") ? 2_000 : 15_000),
    refetchIntervalInBackground: false,
  });
  const items = q.data?.items ?? initial;
  return (
    <section className="space-y-4">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <div>
          <h1 className="text-2xl font-semibold">Redrives</h1>
          <p className="mt-1 text-sm text-slate-600">Bulk redrives of dead letters: who, why, at what rate, and how far they got.</p>
        </div>
        {canCreate && (
          <Link href="/redrive" className={btnPrimary}>
            New redrive…
          </Link>
        )}
      </div>
      {items.length === 0 ? (
        <div className="rounded-lg border border-dashed border-slate-300 bg-white px-4 py-8 text-center text-slate-700">
          No redrives yet. Start one from the Dead letters page{canCreate ? " or with New redrive" : ""}.
        </div>
      ) : (
        <div className={`${card} overflow-x-auto p-0`}>
          <table className="w-full text-left text-sm">
            <thead className="bg-slate-50 text-slate-600">
              <tr>
                <th className="px-3 py-2 font-medium">Batch</th>
                <th className="px-3 py-2 font-medium">Status</th>
                <th className="px-3 py-2 font-medium">Progress</th>
                <th className="px-3 py-2 font-medium">Reason</th>
                <th className="px-3 py-2 font-medium">Filter</th>
                <th className="px-3 py-2 font-medium">By</th>
                <th className="px-3 py-2 font-medium">Started</th>
              </tr>
            </thead>
            <tbody>
              {items.map((b) => (
                <tr key={b.id} className="border-t border-slate-200 align-top">
                  <td className="px-3 py-2 font-mono text-xs">
                    <Link href={`/redrives/${b.id}`} className="text-blue-700 hover:underline">
                      {b.id}
                    </Link>
                  </td>
                  <td className="px-3 py-2">
                    <span className={`rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${STATUS_STYLE[b.status] ?? ""}`}>{b.status}</span>
                  </td>
                  <td className="px-3 py-2 tabular-nums whitespace-nowrap">
                    {b.redriven.toLocaleString("en-US")} redriven, {b.skipped.toLocaleString("en-US")} skipped of {b.matched.toLocaleString("en-US")} · {b.ratePerSecond}/s
                  </td>
                  <td className="px-3 py-2">{b.reason}</td>
                  <td className="px-3 py-2 text-slate-700">{describeFilter(b.filter as Record<string, unknown>)}</td>
                  <td className="px-3 py-2">{b.actor.replace(/^user:/, "")}</td>
                  <td className="px-3 py-2 whitespace-nowrap">{fmtTime(b.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

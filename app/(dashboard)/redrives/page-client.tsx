"use client";
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { apiFetch } from "@/lib/client/api";
import type { RedriveBatchView } from "@/lib/redrive/redrive-batches";
import { DataTable, EmptyState, PageHeader, STATUS_STYLE, btnPrimary, stackedCell, stackedRow } from "@/components/ui/kit";
import { Time, useFormatTime } from "@/components/ui/time";
import { BATCHES_SHOWN, KIND_LABEL, KIND_STYLE, KIND_VERB, describeBatch } from "@/components/redrive/batch-kind";
import { num } from "@/lib/words";

const KINDS = ["redrive", "recover", "backfill"] as const;

export function RedriveBatchesClient({
  initial,
  initialAt,
  canCreate,
  kind,
}: {
  initial: RedriveBatchView[];
  initialAt: number;
  canCreate: boolean;
  /** Only batches of this kind (the ?kind= filter), or every batch. */
  kind: string | null;
}) {
  // One more than is shown, so the page knows (and says) when older batches are left out.
  const url = `/api/v1/redrives?limit=${BATCHES_SHOWN + 1}${kind ? `&kind=${kind}` : ""}`;
  const q = useQuery<{ items: RedriveBatchView[] }>({
    queryKey: [url],
    queryFn: ({ signal }) => apiFetch(url, { signal }),
    initialData: { items: initial },
    initialDataUpdatedAt: initialAt,
    refetchInterval: (query) => (query.state.data?.items.some((b) => b.status === "running") ? 2_000 : 15_000),
    refetchIntervalInBackground: false,
  });
  const all = q.data?.items ?? initial;
  const items = all.slice(0, BATCHES_SHOWN);
  const fmtTime = useFormatTime();
  return (
    <section className="space-y-4">
      <PageHeader
        title="Redrives"
        description="Paced batches (redrives of dead letters, recovers of a window, backfills of a new endpoint): who, why, at what rate, and how far they got."
        actions={
          canCreate && (
            <Link href="/dlq/redrive" className={btnPrimary}>
              New redrive…
            </Link>
          )
        }
      />
      <nav aria-label="Kind" className="flex flex-wrap gap-2 text-sm">
        {[null, ...KINDS].map((k) => (
          <Link
            key={k ?? "all"}
            href={k ? `/redrives?kind=${k}` : "/redrives"}
            aria-current={kind === k ? "page" : undefined}
            className={`rounded-full px-3 py-1 ring-1 ring-inset ${kind === k ? "bg-blue-700 text-white ring-blue-700" : "bg-white text-slate-800 ring-slate-300 hover:bg-slate-50"}`}
          >
            {k ? KIND_LABEL[k] : "All"}
          </Link>
        ))}
      </nav>
      {all.length > BATCHES_SHOWN && (
        <p role="status" className="text-sm text-slate-700" data-testid="batches-cut">
          Showing the newest {num(BATCHES_SHOWN)} batches; older ones open from their audit rows (Audit, target type redrive batch).
        </p>
      )}
      {items.length === 0 ? (
        <EmptyState title={kind ? `No ${kind} batches yet.` : "No batches yet."}>
          {/* Only what this viewer can do: an engineer starts one; anyone else learns who does. */}
          {canCreate
            ? "Start a redrive from the Dead letters page or with New redrive."
            : "Engineers and admins start redrives from the Dead letters page; their batches show here."}
        </EmptyState>
      ) : (
        // Below sm each batch is a card: eight columns do not fit a phone.
        <DataTable look="boxed" stacked columns={["Batch", "Kind", "Status", "Progress", "Reason", "Selection", "By", "Started"]}>
          {items.map((b) => (
            <tr key={b.id} className={`border-t border-slate-200 px-3 align-top first:border-t-0 sm:first:border-t ${stackedRow}`} data-testid="batch-row">
              <td className={`${stackedCell()} font-mono text-xs sm:px-3 sm:py-2`}>
                <Link href={`/redrives/${b.id}`} className="break-all text-blue-700 hover:underline">
                  {b.id}
                </Link>
              </td>
              <td className={`${stackedCell(true)} mt-1 mr-2 sm:mt-0 sm:px-3 sm:py-2`}>
                <span className={`rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${KIND_STYLE[b.kind] ?? ""}`} data-testid="batch-kind">
                  {KIND_LABEL[b.kind] ?? b.kind}
                </span>
              </td>
              <td className={`${stackedCell(true)} sm:px-3 sm:py-2`}>
                <span className={`rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${STATUS_STYLE[b.status] ?? ""}`}>{b.status}</span>
              </td>
              <td className={`${stackedCell()} mt-1 tabular-nums sm:mt-0 sm:whitespace-nowrap sm:px-3 sm:py-2`}>
                {num(b.redriven)} {KIND_VERB[b.kind] ?? "redriven"}, {num(b.skipped)} skipped of {num(b.matched)} · {b.ratePerSecond}/s
              </td>
              <td className={`${stackedCell()} sm:px-3 sm:py-2`}>
                <span className="text-slate-500 sm:hidden">Why: </span>
                {b.reason}
              </td>
              <td className={`${stackedCell()} text-slate-700 sm:px-3 sm:py-2`}>{describeBatch(b.kind, b.filter as Record<string, unknown>, fmtTime)}</td>
              <td className={`${stackedCell(true)} text-slate-600 sm:px-3 sm:py-2 sm:text-slate-900`}>{b.actor.replace(/^user:/, "")}</td>
              <td className={`${stackedCell(true)} text-slate-600 sm:whitespace-nowrap sm:px-3 sm:py-2 sm:text-slate-900`}>
                <Time iso={b.createdAt} relative={false} />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}

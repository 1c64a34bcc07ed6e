"use client";
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { apiFetch } from "@/lib/client/api";
import type { NamedRedriveBatchPage } from "@/lib/redrive/named-batches";
import { DataTable, EmptyState, PageHeader, STATUS_STYLE, btn, btnPrimary, stackedCell, stackedRow } from "@/components/ui/kit";
import { Time, useFormatTime } from "@/components/ui/time";
import {
  BATCHES_SHOWN,
  KIND_LABEL,
  KIND_STYLE,
  KIND_VERB,
  KIND_VERB_WORDS,
  KIND_WORDS,
  batchStatusText,
  describeBatch,
  statusInWords,
  statusStyleKey,
  stillOnTheirWay,
} from "@/components/redrive/batch-kind";
import { actorInWords, num } from "@/lib/words";

const KINDS = ["redrive", "recover", "backfill"] as const;

/** The Redrives page's address for a kind and a cursor (none: the newest batches). */
function pageHref(kind: string | null, cursor: string | null): string {
  const qs = new URLSearchParams({ ...(kind ? { kind } : {}), ...(cursor ? { cursor } : {}) }).toString();
  return `/redrives${qs ? `?${qs}` : ""}`;
}

export function RedriveBatchesClient({
  initial,
  initialAt,
  canCreate,
  kind,
  cursor,
  district,
  words,
}: {
  /** The first page, with its batches' subscriptions' names by id (a district names them by the names it gave them); each poll brings them again. */
  initial: NamedRedriveBatchPage;
  initialAt: number;
  canCreate: boolean;
  /** Only batches of this kind (the ?kind= filter), or every batch. */
  kind: string | null;
  /** The page shown (the ?cursor= of a Next or Previous link), or null for the newest batches. */
  cursor: string | null;
  /** A district's viewer: the page, its kinds and its counts in the district's words (deliveries sent again), not the batches' names. */
  district: boolean;
  /** The header's line and the empty list's, in the viewer's words (components/dashboard/page-access.ts). */
  words: { description: string; empty: string };
}) {
  // The dashboard's own list: the page of GET /api/v1/redrives with the subscriptions' names, so a batch started while
  // the list is open reads by name at once.
  const url = `/api/v1/dashboard/redrives?${new URLSearchParams({ limit: String(BATCHES_SHOWN), ...(kind ? { kind } : {}), ...(cursor ? { cursor } : {}) })}`;
  const q = useQuery<NamedRedriveBatchPage>({
    queryKey: [url],
    queryFn: ({ signal }) => apiFetch(url, { signal }),
    initialData: initial,
    initialDataUpdatedAt: initialAt,
    // What a row says changes as its batch goes. Running: 2 s, as its handled count moves. Done or cancelled with deliveries still on their way: 5 s, as its
    // page polls (each poll counts those batches' items until the pacer settles them, settleFinishedBatches).
    refetchInterval: (query) => {
      const items = query.state.data?.items ?? [];
      return items.some((b) => b.status === "running") ? 2_000 : items.some(stillOnTheirWay) ? 5_000 : 15_000;
    },
    refetchIntervalInBackground: false,
  });
  const data = q.data ?? initial;
  const items = data.items;
  const fmtTime = useFormatTime();
  const kindLabel = district ? KIND_WORDS : KIND_LABEL;
  const kindVerb = district ? KIND_VERB_WORDS : KIND_VERB;
  return (
    <section className="space-y-4">
      <PageHeader
        title={district ? "Sent again" : "Redrives"}
        description={words.description}
        actions={
          canCreate && (
            <Link href="/dlq/redrive" className={btnPrimary}>
              {district ? "Send dead letters again…" : "New redrive…"}
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
            className={`whitespace-nowrap rounded-full px-3 py-1 ring-1 ring-inset ${kind === k ? "bg-blue-700 text-white ring-blue-700" : "bg-white text-slate-800 ring-slate-300 hover:bg-slate-50"}`}
          >
            {k ? kindLabel[k] : "All"}
          </Link>
        ))}
      </nav>
      {items.length === 0 ? (
        <EmptyState title={cursor ? "No batches on this page." : kind ? `No ${district ? kindLabel[kind].toLowerCase() : kind} batches yet.` : "No batches yet."}>
          <span data-testid="batches-empty">{words.empty}</span>
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
                <span className={`whitespace-nowrap rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${KIND_STYLE[b.kind] ?? ""}`} data-testid="batch-kind">
                  {kindLabel[b.kind] ?? b.kind}
                </span>
              </td>
              <td className={`${stackedCell(true)} sm:px-3 sm:py-2`}>
                <span
                  className={`whitespace-nowrap rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${STATUS_STYLE[statusStyleKey(b)] ?? ""}`}
                  data-testid="batch-status"
                >
                  {/* A running batch's count is the Progress column's; a done or cancelled one says what is still on its way, as its page does. */}
                  {b.status === "running" ? statusInWords(b.status, { district }) : batchStatusText(b, { district })}
                </span>
              </td>
              <td className={`${stackedCell()} mt-1 tabular-nums sm:mt-0 sm:whitespace-nowrap sm:px-3 sm:py-2`}>
                {num(b.redriven)} {kindVerb[b.kind] ?? kindVerb.redrive}, {num(b.skipped)} skipped of {num(b.matched)} · {b.ratePerSecond}/s
              </td>
              <td className={`${stackedCell()} sm:px-3 sm:py-2`}>
                <span className="text-slate-500 sm:hidden">Why: </span>
                {b.reason}
              </td>
              <td className={`${stackedCell()} text-slate-700 sm:px-3 sm:py-2`}>
                {describeBatch(b.kind, b.filter as Record<string, unknown>, fmtTime, district ? { names: data.names } : undefined)}
              </td>
              <td className={`${stackedCell(true)} text-slate-600 sm:px-3 sm:py-2 sm:text-slate-900`}>{actorInWords(b.actor)}</td>
              <td className={`${stackedCell(true)} text-slate-600 sm:whitespace-nowrap sm:px-3 sm:py-2 sm:text-slate-900`}>
                <Time iso={b.createdAt} relative={false} />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <BatchPager kind={kind} prevCursor={data.prevCursor} nextCursor={data.nextCursor} />
    </section>
  );
}

/** Links to the newer and the older batches either side of this page; nothing when every batch fits on one. */
function BatchPager({ kind, prevCursor, nextCursor }: { kind: string | null; prevCursor: string | null; nextCursor: string | null }) {
  if (!prevCursor && !nextCursor) return null;
  return (
    <nav aria-label="Batch pages" className="flex flex-wrap items-center gap-3 text-sm">
      <span className="text-slate-700">Newest first, {num(BATCHES_SHOWN)} a page.</span>
      {prevCursor && (
        <Link className={btn} href={pageHref(kind, prevCursor)}>
          ← Previous (newer)
        </Link>
      )}
      {nextCursor && (
        <Link className={btn} href={pageHref(kind, nextCursor)}>
          Next (older) →
        </Link>
      )}
    </nav>
  );
}

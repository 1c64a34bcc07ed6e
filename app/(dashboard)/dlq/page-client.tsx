"use client";
import Link from "next/link";
import { useState } from "react";
import type { DlqGroup, DlqPoint, DlqSummary } from "@/lib/dashboard/dlq";
import { formatAge } from "@/lib/dashboard/describe";
import { ResolveGroupDialog, type ResolveTarget } from "@/components/dlq/ResolveGroupDialog";
import { usePolled } from "@/components/dashboard/usePolled";
import { Time, UpdatedAgo } from "@/components/ui/time";
import { Card, EmptyState, ErrorState, Skeleton, Stat, segBtn, SubLink, btn, btnPrimary, input } from "@/components/ui/kit";
import { DlqCharts } from "@/components/charts/DlqCharts";
import { DEAD_LETTER_REASON_LABELS, ERROR_CLASS_LABELS, labelOf } from "@/components/ui/labels";

type History = { points: DlqPoint[]; bucketSeconds: number };
const RANGES = [
  [1, "1 h"],
  [6, "6 h"],
  [24, "24 h"],
  [168, "7 d"],
] as const;
const reasonLabel = (r: string | null) => labelOf(DEAD_LETTER_REASON_LABELS, r, "unknown");

/** The bulk redrive page, pre-filtered (/dlq/redrive takes these parameters). */
function redriveHref(f: { subscriptionId?: string; reason?: string | null; errorClass?: string | null; statusCode?: number | null }) {
  const qs = new URLSearchParams();
  if (f.subscriptionId) qs.set("subscriptionId", f.subscriptionId);
  if (f.reason) qs.set("reason", f.reason);
  if (f.errorClass) qs.set("errorClass", f.errorClass);
  if (f.statusCode) qs.set("statusCode", String(f.statusCode));
  return `/dlq/redrive?${qs}`;
}

/** The DLQ's depth and oldest age by one key (a subscription, a reason). */
function DepthTable({
  first,
  empty,
  rows,
}: {
  first: string;
  empty: string;
  rows: { key: string; label: React.ReactNode; depth: number; oldestAgeSeconds: number | null }[];
}) {
  if (rows.length === 0) return <EmptyState title={empty} />;
  return (
    <table className="w-full text-left text-sm">
      <thead className="text-slate-600">
        <tr>
          <th scope="col" className="py-1 font-medium">
            {first}
          </th>
          <th scope="col" className="py-1 text-right font-medium">
            Depth
          </th>
          <th scope="col" className="py-1 text-right font-medium">
            Oldest
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.key} className="border-t border-slate-100">
            <td className="py-1.5">{r.label}</td>
            <td className="py-1.5 text-right tabular-nums">{r.depth.toLocaleString()}</td>
            <td className="py-1.5 text-right">{formatAge(r.oldestAgeSeconds)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function DlqClient({
  initial,
  initialAt,
  canRedrive,
  canResolve = false,
  initialFilter,
}: {
  initial: { summary: DlqSummary; history: History };
  initialAt: number;
  canRedrive: boolean;
  canResolve?: boolean;
  initialFilter: { subscriptionId: string; reason: string };
}) {
  const [hours, setHours] = useState<number>(24);
  const [filter, setFilter] = useState(initialFilter);
  const [resolving, setResolving] = useState<ResolveTarget | null>(null);
  const summary = usePolled<DlqSummary>("/api/v1/dlq", { initialData: initial.summary, initialAt });
  const history = usePolled<History>(`/api/v1/dlq/history?hours=${hours}`, { initialData: hours === 24 ? initial.history : undefined, initialAt, intervalMs: 15_000 });
  const s = summary.data ?? initial.summary;
  const groups: DlqGroup[] = s.groups.filter(
    (g) => (!filter.subscriptionId || g.subscriptionId === filter.subscriptionId) && (!filter.reason || (g.reason ?? "") === filter.reason),
  );
  // From the pairs counted now, not the groups, some of which may be the sampler's.
  const filteredDepth = s.bySubscriptionAndReason
    .filter((p) => (!filter.subscriptionId || p.subscriptionId === filter.subscriptionId) && (!filter.reason || (p.reason ?? "") === filter.reason))
    .reduce((n, p) => n + p.depth, 0);
  const filtered = Boolean(filter.subscriptionId || filter.reason);

  return (
    <div className="space-y-6">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h1 className="text-2xl font-semibold">Dead letters</h1>
          <p className="mt-1 text-sm text-slate-700">Deliveries that stopped trying: how many, how old, why, and where to redrive them.</p>
        </div>
        <UpdatedAgo at={summary.dataUpdatedAt} fetching={summary.isFetching} error={summary.isError ? summary.error : undefined} />
      </div>

      <Card>
        <dl className="grid grid-cols-2 gap-4 sm:grid-cols-4">
          <Stat
            label="Depth now"
            value={<span data-testid="dlq-depth">{s.depth.toLocaleString()}</span>}
            hint={`${s.bySubscription.length} subscription${s.bySubscription.length === 1 ? "" : "s"}`}
          />
          <Stat label="Oldest" value={formatAge(s.oldestAgeSeconds)} hint="age of the oldest dead letter" />
          <Stat label="Reasons" value={s.byReason.length} hint={s.byReason.map((r) => reasonLabel(r.reason)).join(", ") || "—"} />
          <Stat
            label="Counted"
            value={<Time iso={s.countedAt} relative={false} className="text-sm font-normal" />}
            hint="from the ledger at each refresh; the charts from the sampler (every 15 s)"
          />
        </dl>
      </Card>

      <Card
        title="Over time"
        id="dlq-history"
        actions={
          <div role="group" aria-label="Time range" className="flex gap-1">
            {RANGES.map(([h, l]) => (
              <button key={h} type="button" aria-pressed={hours === h} className={segBtn(hours === h)} onClick={() => setHours(h)}>
                {l}
              </button>
            ))}
          </div>
        }
      >
        {history.isPending && <Skeleton lines={6} />}
        {history.isError && !history.data && <ErrorState error={history.error} retry={() => history.refetch()} />}
        {history.data &&
          (history.data.points.length === 0 ? (
            <EmptyState title="No samples in this range yet">The sampler records depth and age every 15 seconds while the dashboard runs.</EmptyState>
          ) : (
            <DlqCharts points={history.data.points} />
          ))}
      </Card>

      <div className="grid grid-cols-1 gap-6 lg:grid-cols-2">
        <Card title="By subscription" id="by-sub">
          <DepthTable
            first="Subscription"
            empty="The dead-letter queue is empty"
            rows={s.bySubscription.map((r) => ({ key: r.subscriptionId, label: <SubLink id={r.subscriptionId} name={r.subscriptionName} />, ...r }))}
          />
        </Card>
        <Card title="By reason" id="by-reason">
          <DepthTable
            first="Reason"
            empty="Nothing dead-lettered"
            rows={s.byReason.map((r) => ({
              key: r.reason ?? "",
              label: (
                <>
                  {reasonLabel(r.reason)} <span className="font-mono text-xs text-slate-500">{r.reason}</span>
                </>
              ),
              ...r,
            }))}
          />
        </Card>
      </div>

      <Card title="Redrive by filter" id="groups">
        <form className="mb-3 flex flex-wrap items-end gap-3 text-sm" onSubmit={(e) => e.preventDefault()} aria-label="Filter dead letters">
          <label className="flex flex-col gap-1">
            Subscription
            <select
              aria-label="Filter by subscription"
              className={input}
              value={filter.subscriptionId}
              onChange={(e) => setFilter({ ...filter, subscriptionId: e.target.value })}
            >
              <option value="">All subscriptions</option>
              {s.bySubscription.map((r) => (
                <option key={r.subscriptionId} value={r.subscriptionId}>
                  {r.subscriptionName ?? r.subscriptionId}
                </option>
              ))}
            </select>
          </label>
          <label className="flex flex-col gap-1">
            Reason
            <select aria-label="Filter by reason" className={input} value={filter.reason} onChange={(e) => setFilter({ ...filter, reason: e.target.value })}>
              <option value="">All reasons</option>
              {s.byReason.map((r) => (
                <option key={r.reason ?? ""} value={r.reason ?? ""}>
                  {reasonLabel(r.reason)}
                </option>
              ))}
            </select>
          </label>
          {canRedrive && filtered && filteredDepth > 0 && (
            <Link className={btnPrimary} href={redriveHref({ subscriptionId: filter.subscriptionId, reason: filter.reason })}>
              Redrive these {filteredDepth.toLocaleString()}…
            </Link>
          )}
          {canResolve && filtered && filteredDepth > 0 && (
            <button
              type="button"
              className={btn}
              onClick={() =>
                setResolving({
                  subscriptionId: filter.subscriptionId || undefined,
                  subscriptionName: s.bySubscription.find((r) => r.subscriptionId === filter.subscriptionId)?.subscriptionName,
                  reason: filter.reason || undefined,
                })
              }
            >
              Resolve these {filteredDepth.toLocaleString()}…
            </button>
          )}
        </form>
        {groups.length === 0 ? (
          <EmptyState title={filtered ? "No dead letters match" : "The dead-letter queue is empty"} />
        ) : (
          // relative: the sr-only header text is absolutely placed; without a positioned scroller it escapes it and widens the page on a phone.
          <div className="relative overflow-x-auto">
            <table className="w-full min-w-[36rem] text-left text-sm">
              <caption className="sr-only">Dead letters grouped by subscription, reason, error class and last status</caption>
              <thead className="text-slate-600">
                <tr>
                  <th scope="col" className="py-1 font-medium">
                    Subscription
                  </th>
                  <th scope="col" className="py-1 font-medium">
                    Reason
                  </th>
                  <th scope="col" className="py-1 font-medium">
                    Last answer
                  </th>
                  <th scope="col" className="py-1 text-right font-medium">
                    Depth
                  </th>
                  <th scope="col" className="py-1 text-right font-medium">
                    Oldest
                  </th>
                  <th scope="col" className="py-1">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {groups.map((g, i) => (
                  <tr key={i} className="border-t border-slate-100">
                    <td className="py-1.5">
                      <SubLink id={g.subscriptionId} name={g.subscriptionName} />
                    </td>
                    <td className="py-1.5">{labelOf(DEAD_LETTER_REASON_LABELS, g.reason)}</td>
                    <td className="py-1.5">
                      {g.statusCode ? `HTTP ${g.statusCode}` : labelOf(ERROR_CLASS_LABELS, g.errorClass, "no HTTP answer")}{" "}
                      <span className="font-mono text-xs text-slate-500">{g.errorClass}</span>
                    </td>
                    <td className="py-1.5 text-right tabular-nums">
                      {g.depth.toLocaleString()}
                      {g.sampledAt && <span className="block text-xs font-normal text-slate-500">sampled</span>}
                    </td>
                    <td className="py-1.5 text-right">{formatAge(g.oldestAt ? (Date.parse(s.countedAt) - Date.parse(g.oldestAt)) / 1000 : null)}</td>
                    <td className="py-1.5 text-right">
                      {canRedrive || canResolve ? (
                        <span className="inline-flex flex-wrap justify-end gap-x-3">
                          {canRedrive && (
                            <Link className="text-blue-700 hover:underline" href={redriveHref(g)}>
                              Redrive these…
                            </Link>
                          )}
                          {canResolve && (
                            <button
                              type="button"
                              className="text-blue-700 hover:underline"
                              onClick={() => setResolving({ subscriptionId: g.subscriptionId, subscriptionName: g.subscriptionName, reason: g.reason })}
                            >
                              Resolve…
                            </button>
                          )}
                        </span>
                      ) : (
                        <Link className="text-blue-700 hover:underline" href={`/subscriptions/${encodeURIComponent(g.subscriptionId)}`}>
                          View
                        </Link>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {s.groupsSampledAt && (
          <p className="mt-2 text-xs text-slate-600" data-testid="dlq-groups-sampled">
            The groups of the largest subscriptions are as the sampler saw them at <Time iso={s.groupsSampledAt} relative={false} />; the depths above are counted now,
            and a redrive or resolve previews its exact count.
          </p>
        )}
        {!canRedrive && <p className="mt-2 text-xs text-slate-600">Redrive is for engineers; ask one with the filter above.</p>}
      </Card>
      {resolving && <ResolveGroupDialog target={resolving} onClose={() => setResolving(null)} onDone={() => void summary.refetch()} />}
    </div>
  );
}

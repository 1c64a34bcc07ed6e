"use client";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useMemo, useState } from "react";
import { useQueryClient } from "@tanstack/react-query";
import type { SubscriptionHealth } from "@/lib/dashboard/subscriptions";
import { formatAge, answerOf } from "@/lib/dashboard/describe";
import { usePolled } from "@/components/dashboard/usePolled";
import { UpdatedAgo, useNow } from "@/components/ui/time";
import { EmptyState, ErrorState, SubscriptionStateBadge, btnPrimary, input, ms, pct } from "@/components/ui/kit";
import { NewSubscriptionDialog } from "@/components/subscriptions/NewSubscriptionDialog";
import { ArchivedBadge } from "@/components/subscriptions/ArchiveControl";
import { useViewerTenant } from "@/components/dashboard/ViewerTenant";

type SortKey = "name" | "state" | "success1h" | "success24h" | "p95" | "queued" | "dlq" | "oldest";
const SORTS: { key: SortKey; label: string; get: (s: SubscriptionHealth, now: number) => number | string }[] = [
  { key: "name", label: "Name", get: (s) => s.name.toLowerCase() },
  { key: "state", label: "State", get: (s) => s.state },
  // Unknown rates sort as healthy so real problems rise to the top.
  { key: "success1h", label: "Success 1 h", get: (s) => s.h1.successRate ?? 2 },
  { key: "success24h", label: "Success 24 h", get: (s) => s.h24.successRate ?? 2 },
  { key: "p95", label: "p95 1 h", get: (s) => s.h1.p95Ms ?? -1 },
  { key: "queued", label: "Queued", get: (s) => s.counts.pending + s.counts.scheduled + s.counts.inFlight },
  { key: "dlq", label: "DLQ", get: (s) => s.counts.deadLetter },
  { key: "oldest", label: "Oldest DLQ", get: (s, now) => (s.dlqOldestAt ? now - new Date(s.dlqOldestAt).getTime() : -1) },
];

function Rate({ w }: { w: SubscriptionHealth["h1"] }) {
  const r = w.successRate;
  const color = r === null ? "text-slate-500" : r >= 0.99 ? "text-emerald-800" : r >= 0.9 ? "text-amber-800" : "text-red-800";
  return (
    <span className={`font-medium ${color}`} title={`${w.delivered} of ${w.attempts} attempts delivered`}>
      {pct(r)}
      <span className="block text-xs font-normal text-slate-500">{w.attempts.toLocaleString()} att.</span>
    </span>
  );
}

function Queue({ s }: { s: SubscriptionHealth }) {
  const c = s.counts;
  const parts = [
    c.pending ? `${c.pending >= 10001 ? "10,000+" : c.pending.toLocaleString()} queued` : null,
    c.scheduled ? `${c.scheduled.toLocaleString()} retrying` : null,
    c.inFlight ? `${c.inFlight} sending` : null,
  ].filter(Boolean);
  return <span className="text-slate-800">{parts.length ? parts.join(", ") : <span className="text-slate-500">empty</span>}</span>;
}

function Dlq({ s, now }: { s: SubscriptionHealth; now: number }) {
  if (!s.counts.deadLetter) return <span className="text-slate-500">0</span>;
  return (
    <span className="font-medium text-red-800">
      {s.counts.deadLetter.toLocaleString()}
      <span className="block text-xs font-normal text-slate-600">oldest {formatAge(s.dlqOldestAt ? (now - new Date(s.dlqOldestAt).getTime()) / 1000 : null)}</span>
    </span>
  );
}

function LastError({ s }: { s: SubscriptionHealth }) {
  if (!s.lastError) return <span className="text-slate-500">none recently</span>;
  return (
    <span className="line-clamp-2 break-words text-slate-800" title={s.lastError.message ?? ""}>
      {answerOf(s.lastError.statusCode, s.lastError.errorClass, s.lastError.message)}
    </span>
  );
}

function Cell({ label, children, className = "" }: { label: string; children: React.ReactNode; className?: string }) {
  return (
    <td className={`flex items-start justify-between gap-3 border-t border-slate-100 py-1.5 md:table-cell md:border-0 md:px-3 md:py-2 ${className}`}>
      <span className="shrink-0 text-xs text-slate-500 md:hidden">{label}</span>
      <span className="min-w-0 text-right md:text-left">{children}</span>
    </td>
  );
}

/** The page's own URL for a tenant and the archived filter (both live in the query string, so a reload keeps them). */
function pageUrl(tenant: string, archived: boolean): string {
  const qs = new URLSearchParams({ ...(tenant ? { tenant } : {}), ...(archived ? { archived: "true" } : {}) }).toString();
  return qs ? `?${qs}` : "";
}

export function SubscriptionsClient({
  initial,
  initialAt,
  tenant: tenantParam,
  tenants,
  showArchived: initialShowArchived,
  canCreate,
  canSubscribeAll,
  eventTypes,
}: {
  initial: SubscriptionHealth[];
  initialAt: number;
  tenant: string;
  tenants: string[];
  showArchived: boolean;
  canCreate: boolean;
  canSubscribeAll: boolean;
  eventTypes: string[];
}) {
  const router = useRouter();
  const qc = useQueryClient();
  // A district's viewer has one tenant: no picker, and its own district named instead of "every endpoint".
  const district = useViewerTenant();
  // A ?tenant= in a district viewer's URL selects nothing: the server answers its own district whatever it says.
  const tenant = district ? "" : tenantParam;
  const now = useNow(15_000);
  const [creating, setCreating] = useState(false);
  // Held here so the box answers at once; the URL follows (a reload keeps the choice).
  const [showArchived, setShowArchived] = useState(initialShowArchived);
  const [sort, setSort] = useState<{ key: SortKey; dir: 1 | -1 }>({ key: "name", dir: 1 });
  const res = usePolled<{ items: SubscriptionHealth[] }>(`/api/v1/dashboard/subscriptions${pageUrl(tenant, showArchived)}`, {
    initialData: showArchived === initialShowArchived ? { items: initial } : undefined,
    initialAt,
  });
  const items = useMemo(() => {
    const spec = SORTS.find((s) => s.key === sort.key)!;
    return [...(res.data?.items ?? [])].sort((a, b) => {
      const x = spec.get(a, now);
      const y = spec.get(b, now);
      return (x < y ? -1 : x > y ? 1 : 0) * sort.dir || a.name.localeCompare(b.name);
    });
  }, [res.data, sort, now]);

  const header = (key: SortKey, label: string, className = "") => {
    const active = sort.key === key;
    return (
      <th scope="col" className={`px-3 py-2 font-medium ${className}`} aria-sort={active ? (sort.dir === 1 ? "ascending" : "descending") : "none"}>
        <button
          type="button"
          className="inline-flex items-center gap-1 rounded hover:text-slate-900 focus:outline-none focus-visible:ring-2 focus-visible:ring-blue-600"
          onClick={() => setSort((s) => ({ key, dir: s.key === key ? (-s.dir as 1 | -1) : key === "name" ? 1 : -1 }))}
        >
          {label}
          <span aria-hidden className="text-xs">
            {active ? (sort.dir === 1 ? "▲" : "▼") : "↕"}
          </span>
        </button>
      </th>
    );
  };

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h1 className="text-2xl font-semibold">Subscriptions</h1>
          <p className="mt-1 text-sm text-slate-700">
            {district ? `Health of ${district.name}'s endpoints` : "Health of every endpoint"}: success rate and latency over the last hour and day, what is queued, what
            is dead-lettered.
          </p>
        </div>
        <div className="flex flex-wrap items-center gap-3">
          {!district && (
            <label className="flex items-center gap-2 text-sm text-slate-700">
              Tenant
              <select className={input} value={tenant} onChange={(e) => router.replace(`/subscriptions${pageUrl(e.target.value, showArchived)}`)}>
                <option value="">All tenants</option>
                {tenants.map((t) => (
                  <option key={t} value={t}>
                    {t}
                  </option>
                ))}
              </select>
            </label>
          )}
          <label className="flex items-center gap-2 text-sm text-slate-700 md:hidden">
            Sort by
            <select className={input} value={sort.key} onChange={(e) => setSort({ key: e.target.value as SortKey, dir: e.target.value === "name" ? 1 : -1 })}>
              {SORTS.map((s) => (
                <option key={s.key} value={s.key}>
                  {s.label}
                </option>
              ))}
            </select>
          </label>
          <label className="flex items-center gap-2 text-sm text-slate-700">
            <input
              type="checkbox"
              checked={showArchived}
              onChange={(e) => {
                setShowArchived(e.target.checked);
                router.replace(`/subscriptions${pageUrl(tenant, e.target.checked)}`);
              }}
            />
            Show archived
          </label>
          <UpdatedAgo at={res.dataUpdatedAt} fetching={res.isFetching} error={res.isError ? res.error : undefined} />
          {canCreate && (
            <button type="button" className={btnPrimary} onClick={() => setCreating(true)}>
              New subscription
            </button>
          )}
        </div>
      </div>
      {creating && (
        <NewSubscriptionDialog
          tenants={tenants}
          eventTypes={eventTypes}
          canSubscribeAll={canSubscribeAll && !district}
          onClose={() => setCreating(false)}
          onCreated={() => qc.invalidateQueries()}
        />
      )}
      {res.isError && !res.data && <ErrorState error={res.error} retry={() => res.refetch()} />}
      {items.length === 0 ? (
        <EmptyState title={tenant ? `No subscriptions for tenant ${tenant}` : district ? `${district.name} has no subscriptions yet` : "No subscriptions yet"}>
          {tenant ? "Choose another tenant, or all tenants." : canCreate ? "Create one with New subscription." : "A manager creates them; ask one."}
        </EmptyState>
      ) : (
        // One table for every width: below md each row reflows into a card
        // (the column name shown inline), so there is one copy of each row in the DOM.
        <div className="relative md:overflow-x-auto md:rounded-lg md:border md:border-slate-200 md:bg-white md:shadow-sm">
          <table className="block w-full text-left text-sm md:table">
            <caption className="sr-only">Subscriptions, sortable by each column heading</caption>
            <thead className="hidden bg-slate-50 text-slate-700 md:table-header-group">
              <tr>
                {header("name", "Subscription")}
                {header("state", "State")}
                {header("success1h", "Success 1 h")}
                {header("success24h", "Success 24 h")}
                {header("p95", "p50 / p95")}
                {header("queued", "Queue")}
                {header("dlq", "DLQ")}
                <th scope="col" className="px-3 py-2 font-medium">
                  Last error
                </th>
              </tr>
            </thead>
            <tbody className="block space-y-3 md:table-row-group md:space-y-0">
              {items.map((s) => (
                <tr
                  key={s.id}
                  className="block rounded-lg border border-slate-200 bg-white p-3 align-top shadow-sm md:table-row md:rounded-none md:border-0 md:border-t md:p-0 md:shadow-none md:hover:bg-slate-50"
                >
                  <td className="block pb-1 md:table-cell md:px-3 md:py-2">
                    <Link href={`/subscriptions/${encodeURIComponent(s.id)}`} className="font-medium text-blue-700 hover:underline">
                      {s.name}
                    </Link>
                    <div className="font-mono text-xs text-slate-500">{s.id}</div>
                    {!district && <div className="text-xs text-slate-600">{s.tenant ?? "all tenants"}</div>}
                  </td>
                  <Cell label="State">
                    {/* An archived subscription's state waits for an unarchive; "archived" is what is true now. */}
                    {s.archivedAt ? <ArchivedBadge /> : <SubscriptionStateBadge s={s} />}
                  </Cell>
                  <Cell label="Success 1 h">
                    <Rate w={s.h1} />
                  </Cell>
                  <Cell label="Success 24 h">
                    <Rate w={s.h24} />
                  </Cell>
                  <Cell label="p50 / p95" className="whitespace-nowrap text-slate-800">
                    {ms(s.h1.p50Ms)} / {ms(s.h1.p95Ms)}
                    <span className="block text-xs text-slate-500">
                      24 h: {ms(s.h24.p50Ms)} / {ms(s.h24.p95Ms)}
                    </span>
                  </Cell>
                  <Cell label="Queue">
                    <Queue s={s} />
                    <span className="block text-xs text-slate-500">{s.counts.delivered24h.toLocaleString()} delivered 24 h</span>
                  </Cell>
                  <Cell label="DLQ">
                    <Dlq s={s} now={now} />
                  </Cell>
                  <Cell label="Last error" className="md:max-w-xs">
                    <LastError s={s} />
                  </Cell>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p className="text-xs text-slate-600">Success rate and latency come from per-minute rollups refreshed every 15 s; queue and DLQ counts are live.</p>
    </div>
  );
}

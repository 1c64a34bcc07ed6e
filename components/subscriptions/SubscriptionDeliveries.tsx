"use client";
// A subscription's deliveries, newest first, 25 a page, filtered by state,
// event type, answer and time; each says in words what happened to it.
import Link from "next/link";
import { useState } from "react";
import type { SubscriptionOverview } from "@/lib/dashboard/subscriptions";
import type { DeliveryLite } from "@/lib/dashboard/describe";
import { describeDelivery } from "@/lib/dashboard/describe";
import { usePolled } from "@/components/dashboard/usePolled";
import { formatTime, UpdatedAgo, useTimeZone } from "@/components/ui/time";
import { Card, EmptyState, ErrorState, Skeleton, StateBadge, btn } from "@/components/ui/kit";
import { deliveryBadgeState } from "@/components/ui/labels";
import { DeliveryFilters, NO_FILTERS, type DeliveryFilterValues as Filters } from "@/components/dashboard/DeliveryFilters";
import { LiveButton } from "@/components/ui/LiveButton";

export type DeliveriesPage = { items: DeliveryLite[]; nextCursor: string | null };

function deliveriesQuery(filters: Filters, cursor: string | undefined): URLSearchParams {
  const qs = new URLSearchParams({ limit: "25" });
  if (filters.state) qs.set("state", filters.state);
  if (filters.eventType) qs.set("eventType", filters.eventType);
  if (filters.statusCode) qs.set("statusCode", filters.statusCode);
  if (filters.errorClass) qs.set("errorClass", filters.errorClass);
  if (filters.from) qs.set("from", new Date(filters.from).toISOString());
  if (filters.to) qs.set("to", new Date(filters.to).toISOString());
  if (cursor) qs.set("cursor", cursor);
  return qs;
}

function DeliveryRows({ items }: { items: DeliveryLite[] }) {
  const tz = useTimeZone();
  return (
    <ul className="divide-y divide-slate-100" data-testid="deliveries-list">
      {items.map((d) => (
        <li key={d.id} className="flex flex-col gap-1 py-2 sm:flex-row sm:items-center sm:justify-between sm:gap-4">
          <div className="min-w-0">
            <Link href={`/deliveries/${d.id}`} className="text-sm font-medium text-blue-700 hover:underline">
              {describeDelivery(d, (iso) => formatTime(iso, tz)).text}
            </Link>
            <p className="truncate text-xs text-slate-600">
              <span className="font-mono">{d.eventId}</span> · {d.eventType} · created {formatTime(d.createdAt, tz)}
            </p>
          </div>
          <span className="shrink-0 self-start sm:self-auto">
            <StateBadge state={deliveryBadgeState(d.state, d.subscriptionState)} />
          </span>
        </li>
      ))}
    </ul>
  );
}

export function SubscriptionDeliveries({
  o,
  initial,
  initialAt,
  filters,
  setFilters,
}: {
  o: SubscriptionOverview;
  initial: DeliveriesPage;
  initialAt: number;
  filters: Filters;
  setFilters: (f: Filters) => void;
}) {
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const isInitial = !cursor && Object.values(filters).every((v) => !v);
  const res = usePolled<DeliveriesPage>(`/api/v1/dashboard/subscriptions/${encodeURIComponent(o.id)}/deliveries?${deliveriesQuery(filters, cursor)}`, {
    initialData: isInitial ? initial : undefined,
    initialAt,
  });
  const set = (k: keyof Filters, v: string) => {
    setCursors([]);
    setFilters({ ...filters, [k]: v });
  };
  return (
    <Card title="Deliveries" id="deliveries" actions={<UpdatedAgo at={res.dataUpdatedAt} fetching={res.isFetching} error={res.isError ? res.error : undefined} />}>
      <DeliveryFilters filters={filters} eventTypes={o.knownEventTypes} onChange={set} />
      {Object.values(filters).some(Boolean) && (
        <LiveButton type="button" className="mb-2 text-sm text-blue-700 hover:underline" onClick={() => (setCursors([]), setFilters(NO_FILTERS))}>
          Clear filters
        </LiveButton>
      )}
      {res.isPending && <Skeleton lines={5} />}
      {res.isError && !res.data && <ErrorState error={res.error} retry={() => res.refetch()} />}
      {res.data && res.data.items.length === 0 && <EmptyState title="No deliveries match">Change or clear the filters.</EmptyState>}
      {res.data && res.data.items.length > 0 && <DeliveryRows items={res.data.items} />}
      <div className="mt-3 flex flex-wrap items-center gap-2">
        <LiveButton type="button" className={btn} disabled={cursors.length === 0} onClick={() => setCursors([])}>
          Newest
        </LiveButton>
        <LiveButton type="button" className={btn} disabled={cursors.length === 0} onClick={() => setCursors((c) => c.slice(0, -1))}>
          ← Newer
        </LiveButton>
        <LiveButton
          type="button"
          className={btn}
          disabled={!res.data?.nextCursor}
          onClick={() => res.data?.nextCursor && setCursors((c) => [...c, res.data!.nextCursor!])}
        >
          Older →
        </LiveButton>
        <span className="text-xs text-slate-600">Page {cursors.length + 1}</span>
      </div>
    </Card>
  );
}

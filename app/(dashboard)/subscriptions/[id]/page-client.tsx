"use client";
// A subscription's page: a layout of its parts (components/subscriptions/),
// which share the overview polled here and the deliveries filter, so that
// "Show deliveries" on an answer group filters the list below it.
import { useState } from "react";
import { useQueryClient } from "@tanstack/react-query";
import type { SubscriptionOverview } from "@/lib/dashboard/subscriptions";
import { usePolled } from "@/components/dashboard/usePolled";
import { NO_FILTERS, type DeliveryFilterValues as Filters } from "@/components/dashboard/DeliveryFilters";
import { OutcomesCard, SubscriptionHeader, SubscriptionStats } from "@/components/subscriptions/SubscriptionSummary";
import type { Range } from "@/components/subscriptions/outcome-ranges";
import { AnswerGroups, type Answers } from "@/components/subscriptions/AnswerGroups";
import { SubscriptionDeliveries, type DeliveriesPage } from "@/components/subscriptions/SubscriptionDeliveries";
import { SubscriptionConfig } from "@/components/subscriptions/SubscriptionConfig";
import { SigningSecrets } from "@/components/subscriptions/SigningSecrets";
import { EndpointAuth } from "@/components/subscriptions/EndpointAuth";
import { SendTest } from "@/components/subscriptions/SendTest";
import { EndpointHealth } from "@/components/subscriptions/EndpointHealth";
import { RecoverWindowControl } from "@/components/redrive/RecoverWindowControl";

type Initial = { overview: SubscriptionOverview; answers: Answers; deliveries: DeliveriesPage; range: Range };

export function SubscriptionClient({
  initial,
  initialAt,
  canPause,
  canEdit,
  canRedrive,
  canRotate,
  canExpireSecret,
  canArchive,
}: {
  initial: Initial;
  initialAt: number;
  canPause: boolean;
  canEdit: boolean;
  canRedrive: boolean;
  canRotate: boolean;
  canExpireSecret: boolean;
  canArchive: boolean;
}) {
  const qc = useQueryClient();
  const [range, setRangeState] = useState<Range>(initial.range);
  // The chosen range goes into the address (other parameters kept), so a reload or a shared link opens the same window.
  const setRange = (r: Range) => {
    setRangeState(r);
    const url = new URL(window.location.href);
    url.searchParams.set("range", r);
    window.history.replaceState(window.history.state, "", url);
  };
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [notice, setNotice] = useState<string | null>(null);
  const id = initial.overview.id;
  const ov = usePolled<SubscriptionOverview>(`/api/v1/dashboard/subscriptions/${encodeURIComponent(id)}?range=${range}`, {
    initialData: range === initial.range ? initial.overview : undefined,
    initialAt,
  });
  const answers = usePolled<Answers>(`/api/v1/dashboard/subscriptions/${encodeURIComponent(id)}/answers`, {
    initialData: initial.answers,
    initialAt,
    intervalMs: 15_000,
  });
  const o = ov.data ?? initial.overview;
  const refresh = () => qc.invalidateQueries();
  const archived = Boolean(o.archivedAt);

  return (
    <div className="space-y-6">
      <SubscriptionHeader
        o={o}
        updated={{ at: ov.dataUpdatedAt, fetching: ov.isFetching, error: ov.isError ? ov.error : undefined }}
        notice={notice}
        canPause={canPause}
        canArchive={canArchive}
        onChanged={refresh}
        onArchived={(m) => {
          setNotice(m);
          refresh();
        }}
      />
      <SubscriptionStats o={o} />
      <OutcomesCard o={o} range={range} setRange={setRange} pending={ov.isPending} />
      <AnswerGroups answers={answers.data} subscriptionId={o.id} canRedrive={canRedrive} onShow={setFilters} />
      <SubscriptionDeliveries o={o} initial={initial.deliveries} initialAt={initialAt} filters={filters} setFilters={setFilters} />
      <SubscriptionConfig
        version={`${o.name}|${o.tenant}|${o.storedUrl ?? o.url}|${o.eventTypes.join()}|${JSON.stringify(o.retryPolicy)}|${o.rateLimitPerSecond}|${o.maxConcurrency}`}
        o={o}
        canEdit={canEdit && !archived}
        onDone={refresh}
      />
      <EndpointHealth subscriptionId={o.id} held={o.counts.pending + o.counts.scheduled} lastAttempts={o.lastAttempts} />
      <SigningSecrets subscriptionId={o.id} canRotate={canRotate && !archived} canExpire={canExpireSecret} />
      <EndpointAuth subscriptionId={o.id} canEdit={canEdit && !archived} />
      <SendTest subscriptionId={o.id} canSend={canEdit} eventTypes={o.eventTypes} />
      <RecoverWindowControl subscriptionId={o.id} canStart={canRedrive && !archived} />
    </div>
  );
}

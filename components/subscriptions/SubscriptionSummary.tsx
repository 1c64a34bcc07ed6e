"use client";
// The top of a subscription's page: its name, state and tenant, why it is
// held or archived, the pause and archive controls; then its numbers now
// (success, latency, queue, dead letters) and its outcomes over time.
import { OUTCOME_RANGES, type Range } from "./outcome-ranges";
import Link from "next/link";
import type { SubscriptionOverview } from "@/lib/dashboard/subscriptions";
import { formatAge } from "@/lib/dashboard/describe";
import { formatTime, UpdatedAgo, useNow, useTimeZone } from "@/components/ui/time";
import { Card, Skeleton, Stat, StateBadge, ms, pct, SegmentedControl } from "@/components/ui/kit";
import { OutcomesChart } from "@/components/charts/OutcomesChart";
import { useViewerTenant } from "@/components/dashboard/ViewerTenant";
import { ArchiveControl, ArchivedBadge } from "./ArchiveControl";
import { PauseControl } from "./PauseControl";
import { FailingSince } from "./FailingSince";
import { num } from "@/lib/words";
import { outcomesEmptyWords, windowHint, windowLags } from "./window-hint";

const HOUR_MS = 3600_000;
const DAY_MS = 86400_000;

function HeaderNotes({ o, notice }: { o: SubscriptionOverview; notice: string | null }) {
  const tz = useTimeZone();
  const district = useViewerTenant();
  const archived = Boolean(o.archivedAt);
  return (
    <div className="min-w-0">
      {/* A name is anyone's text, sometimes one long word: it breaks rather than push the page sideways on a phone. */}
      <h1 className="flex flex-wrap items-center gap-2 text-2xl font-semibold wrap-anywhere">
        <span className="min-w-0">{o.name}</span> {archived ? <ArchivedBadge /> : <StateBadge state={o.state} />}
      </h1>
      <p className="mt-1 text-sm text-slate-700">
        {o.tenant ? (district?.id === o.tenant ? district.name : `Tenant ${o.tenant}`) : "All tenants"} · <span className="font-mono text-xs">{o.id}</span>
      </p>
      {archived && (
        <p className="mt-1 text-sm text-slate-800" data-testid="archived-note">
          Archived {formatTime(o.archivedAt!, tz)} by {o.archivedBy}: {o.archiveReason}. It receives no new deliveries; its history stays here and in lookups.
        </p>
      )}
      {notice && (
        <p role="status" className="mt-1 text-sm text-emerald-800">
          {notice}
        </p>
      )}
      {!archived && o.state !== "active" && o.stateReason && (
        <p className="mt-1 text-sm text-amber-900">
          {o.state === "paused" ? "Paused" : "Disabled"}: {o.stateReason}. New deliveries are held, not dropped.
        </p>
      )}
      {o.failing && (
        <div className="mt-2">
          <FailingSince s={o} />
        </div>
      )}
    </div>
  );
}

export function SubscriptionHeader({
  o,
  updated,
  notice,
  canPause,
  canArchive,
  onArchived,
  onChanged,
}: {
  o: SubscriptionOverview;
  /** The overview's refresh state, shown under the controls. */
  updated: { at: number; fetching: boolean; error?: unknown };
  notice: string | null;
  canPause: boolean;
  canArchive: boolean;
  onArchived: (message: string) => void;
  onChanged: () => void;
}) {
  const archived = Boolean(o.archivedAt);
  return (
    <>
      <nav aria-label="Breadcrumb" className="text-sm text-slate-600 wrap-anywhere">
        <Link href="/subscriptions" className="hover:underline">
          Subscriptions
        </Link>{" "}
        / {o.name}
      </nav>
      <div className="flex flex-wrap items-start justify-between gap-3">
        <HeaderNotes o={o} notice={notice} />
        <div className="flex flex-col items-end gap-2">
          <div className="flex flex-wrap items-start justify-end gap-2">
            {canPause && !archived && <PauseControl o={o} onDone={onChanged} />}
            {canArchive && <ArchiveControl subscriptionId={o.id} name={o.name} archived={archived} queued={o.counts.pending + o.counts.scheduled} onDone={onArchived} />}
          </div>
          <UpdatedAgo at={updated.at} fetching={updated.fetching} error={updated.error} />
        </div>
      </div>
    </>
  );
}

export function SubscriptionStats({ o }: { o: SubscriptionOverview }) {
  const now = useNow(15_000);
  const c = o.counts;
  const held = o.state !== "active";
  return (
    <Card>
      <dl className="grid grid-cols-2 gap-4 sm:grid-cols-3 lg:grid-cols-6">
        <Stat
          label="Success 1 h"
          value={pct(o.h1.successRate)}
          hint={<span data-testid="success-1h-hint">{windowHint(o.h1, windowLags(o.h1, o.lastAttempts, HOUR_MS, now))}</span>}
        />
        <Stat label="Success 24 h" value={pct(o.h24.successRate)} hint={windowHint(o.h24, windowLags(o.h24, o.lastAttempts, DAY_MS, now))} />
        <Stat label="p50 / p95 1 h" value={`${ms(o.h1.p50Ms)} / ${ms(o.h1.p95Ms)}`} hint={`24 h: ${ms(o.h24.p50Ms)} / ${ms(o.h24.p95Ms)}`} />
        <Stat
          label={held ? "Held" : "Pending"}
          value={<span data-testid="queued-count">{c.pending >= 10001 ? "10,000+" : num(c.pending)}</span>}
          hint={held ? "sent when resumed" : "due to send"}
        />
        <Stat label={held ? "Held to retry / in flight" : "Scheduled / in flight"} value={`${num(c.scheduled)} / ${c.inFlight}`} />
        <Stat
          label="Dead letters"
          value={num(c.deadLetter)}
          hint={
            c.deadLetter ? (
              <Link className="text-blue-700 hover:underline" href={`/dlq?subscriptionId=${encodeURIComponent(o.id)}`}>
                oldest {formatAge(o.dlqOldestAt ? (now - new Date(o.dlqOldestAt).getTime()) / 1000 : null)} · view
              </Link>
            ) : (
              "none"
            )
          }
        />
      </dl>
    </Card>
  );
}

export function OutcomesCard({ o, range, setRange, pending }: { o: SubscriptionOverview; range: Range; setRange: (r: Range) => void; pending: boolean }) {
  const now = useNow(15_000);
  const lags = windowLags(o.h1, o.lastAttempts, HOUR_MS, now);
  const counted = o.series.reduce((s, p) => s + p.delivered + p.retried + p.deadLettered + p.abandoned, 0);
  return (
    <Card
      title="Outcomes over time"
      id="outcomes"
      actions={<SegmentedControl label="Time range" options={OUTCOME_RANGES.map((r) => ({ value: r, label: r }))} value={range} onChange={setRange} />}
    >
      {pending ? <Skeleton lines={6} /> : <OutcomesChart points={o.series} label={`Attempt outcomes, last ${range}`} emptyWords={outcomesEmptyWords(lags)} />}
      {/* An empty chart says it in its caption already. */}
      {lags && counted > 0 && (
        <p className="mt-2 text-xs text-slate-600" data-testid="outcomes-lag">
          Counted each minute: the newest attempts show here within a minute.
        </p>
      )}
    </Card>
  );
}

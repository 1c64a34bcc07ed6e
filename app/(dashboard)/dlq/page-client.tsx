"use client";
import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { useRef, useState, type RefObject } from "react";
import type { DlqGroup, DlqPoint, DlqSummary } from "@/lib/dashboard/dead-letters";
import { formatAge } from "@/lib/dashboard/describe";
import { ResolveGroupDialog, type ResolveTarget } from "@/components/dlq/ResolveGroupDialog";
import { usePolled } from "@/components/dashboard/usePolled";
import { Time, UpdatedAgo } from "@/components/ui/time";
import {
  Card,
  DataTable,
  EmptyState,
  ErrorState,
  PageHeader,
  Skeleton,
  Stat,
  SegmentedControl,
  SubLink,
  btn,
  btnPrimary,
  input,
  stackedCell,
  stackedRow,
} from "@/components/ui/kit";
import { OptionSelect } from "@/components/ui/form";
import { DlqCharts, type SampleGap } from "@/components/charts/DlqCharts";
import { CHART_RANGES, rangeFromParam, rangeParam } from "@/components/charts/axes";
import { DEAD_LETTER_REASON_LABELS, DEAD_LETTER_REASON_TITLE, DEAD_LETTER_REASON_WORDS, ERROR_CLASS_LABELS, labelOf } from "@/components/ui/labels";
import { LiveButton, LiveFieldset } from "@/components/ui/LiveButton";
import { num, count, noun } from "@/lib/words";
import { useViewerTenant } from "@/components/dashboard/ViewerTenant";

type History = { points: DlqPoint[]; bucketSeconds: number; gaps: SampleGap[] };
const RANGES = CHART_RANGES.map(({ value, label }) => ({ value, label }));
/** `district`: in its words ("sending was interrupted every time"), not of the worker that died mid-send. */
const reasonLabel = (r: string | null, district = false) => labelOf(district ? DEAD_LETTER_REASON_WORDS : DEAD_LETTER_REASON_LABELS, r, "unknown");

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
    <DataTable look="compact" columns={[first, { label: "Depth", right: true }, { label: "Oldest", right: true }]}>
      {rows.map((r) => (
        <tr key={r.key} className="border-t border-slate-100">
          <td className="py-1.5">{r.label}</td>
          <td className="py-1.5 pl-4 text-right tabular-nums">{num(r.depth)}</td>
          <td className="whitespace-nowrap py-1.5 pl-4 text-right">{formatAge(r.oldestAgeSeconds)}</td>
        </tr>
      ))}
    </DataTable>
  );
}

type Filter = { subscriptionId: string; reason: string };

/**
 * The options, with the chosen value kept when it has just left them (its last dead letters resolved or redriven):
 * a select whose value is missing shows its first option, "All reasons", while the table still filters on the old one.
 */
function withChosen(options: { value: string; label: string }[], chosen: string, label = chosen) {
  return !chosen || options.some((o) => o.value === chosen) ? options : [...options, { value: chosen, label }];
}

/** The groups a redrive or resolve filters on, each with its links. */
function GroupsTable({
  groups,
  countedAt,
  canRedrive,
  canResolve,
  onResolve,
}: {
  groups: DlqGroup[];
  countedAt: string;
  canRedrive: boolean;
  canResolve: boolean;
  onResolve: (t: ResolveTarget) => void;
}) {
  // Below sm each group is a card (its subscription, then why, then how many and how old, then what to do): six
  // columns do not fit a phone, and scrolling them hid the depth and the actions.
  const hint = "text-slate-500 sm:hidden";
  // The error class's ledger name beside its words is for engineers filtering by it; a district reads the words.
  const district = useViewerTenant() !== null;
  return (
    <DataTable
      look="compact"
      stacked
      tableClassName="sm:min-w-[36rem]"
      caption={<caption className="sr-only">Dead letters grouped by subscription, reason, error class and last status</caption>}
      columns={[
        "Subscription",
        DEAD_LETTER_REASON_TITLE,
        "Last answer",
        { label: "Depth", right: true },
        { label: "Oldest", right: true },
        { label: "Actions", srOnly: true },
      ]}
    >
      {groups.map((g, i) => (
        <tr key={i} className={`border-t border-slate-100 ${stackedRow}`} data-testid="dlq-group">
          <td className={`${stackedCell()} sm:py-1.5`}>
            <SubLink id={g.subscriptionId} name={g.subscriptionName} />
          </td>
          <td className={`${stackedCell(true)} sm:py-1.5`}>{labelOf(DEAD_LETTER_REASON_LABELS, g.reason)}</td>
          <td className={`${stackedCell(true)} sm:py-1.5`}>
            {g.statusCode ? `HTTP ${g.statusCode}` : labelOf(ERROR_CLASS_LABELS, g.errorClass, "no HTTP answer")}{" "}
            {!district && <span className="font-mono text-xs text-slate-500">{g.errorClass}</span>}
          </td>
          <td className={`${stackedCell(true)} tabular-nums sm:py-1.5 sm:pl-4 sm:text-right`}>
            <span className={hint}>Depth </span>
            {num(g.depth)}
            {g.sampledAt && <span className="ml-1 text-xs font-normal text-slate-500 sm:ml-0 sm:block">sampled</span>}
          </td>
          <td className={`${stackedCell(true)} sm:py-1.5 sm:pl-4 sm:text-right`}>
            <span className={hint}>oldest </span>
            {formatAge(g.oldestAt ? (Date.parse(countedAt) - Date.parse(g.oldestAt)) / 1000 : null)}
          </td>
          <td className={`${stackedCell()} pt-1 sm:py-1.5 sm:pl-4 sm:text-right`}>
            {canRedrive || canResolve ? (
              <span className="inline-flex flex-wrap gap-x-4 sm:justify-end sm:gap-x-3">
                {canRedrive && (
                  <Link className="text-blue-700 hover:underline" href={redriveHref(g)}>
                    Redrive these…
                  </Link>
                )}
                {canResolve && (
                  <LiveButton
                    type="button"
                    className="text-blue-700 hover:underline"
                    onClick={() => onResolve({ subscriptionId: g.subscriptionId, subscriptionName: g.subscriptionName, reason: g.reason })}
                  >
                    Resolve…
                  </LiveButton>
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
    </DataTable>
  );
}

/** "Redrive by filter": choose a subscription and a reason; the matching groups, and the links that act on all of them. */
function GroupsCard({
  s,
  initialFilter,
  canRedrive,
  canResolve,
  redriveHint,
  onResolve,
  formRef,
}: {
  s: DlqSummary;
  initialFilter: Filter;
  canRedrive: boolean;
  canResolve: boolean;
  redriveHint: string | null;
  onResolve: (t: ResolveTarget) => void;
  formRef: RefObject<HTMLFormElement | null>;
}) {
  const [filter, setFilter] = useState(initialFilter);
  const district = useViewerTenant() !== null;
  const matches = (subscriptionId: string, reason: string | null) =>
    (!filter.subscriptionId || subscriptionId === filter.subscriptionId) && (!filter.reason || (reason ?? "") === filter.reason);
  const groups = s.groups.filter((g) => matches(g.subscriptionId, g.reason));
  // From the pairs counted now, not the groups, some of which may be the sampler's; by reason alone from the whole
  // DLQ's reasons, as the pairs are those of the listed subscriptions only.
  const filteredDepth = filter.subscriptionId
    ? s.bySubscriptionAndReason.filter((p) => matches(p.subscriptionId, p.reason)).reduce((n, p) => n + p.depth, 0)
    : s.byReason.filter((r) => (r.reason ?? "") === filter.reason).reduce((n, r) => n + r.depth, 0);
  const filtered = Boolean(filter.subscriptionId || filter.reason);
  const acting = filtered && filteredDepth > 0;
  return (
    // A viewer who may not redrive filters to look (and to say what to redrive): the title does not offer what it cannot do.
    <Card title={canRedrive ? "Redrive by filter" : "Dead letters by filter"} id="groups">
      <form ref={formRef} className="mb-3 flex flex-wrap items-end gap-3 text-sm" onSubmit={(e) => e.preventDefault()} aria-label="Filter dead letters">
        <LiveFieldset>
          <label className="flex min-w-0 max-w-full flex-col gap-1">
            Subscription
            <OptionSelect
              aria-label="Filter by subscription"
              any="All subscriptions"
              options={withChosen(
                s.bySubscription.map((r) => ({ value: r.subscriptionId, label: r.subscriptionName ?? r.subscriptionId })),
                filter.subscriptionId,
              )}
              value={filter.subscriptionId}
              onChange={(e) => setFilter({ ...filter, subscriptionId: e.target.value })}
            />
          </label>
          <label className="flex min-w-0 max-w-full flex-col gap-1">
            {DEAD_LETTER_REASON_TITLE}
            <OptionSelect
              aria-label="Filter by reason"
              any="All reasons"
              options={withChosen(
                s.byReason.map((r) => ({ value: r.reason ?? "", label: reasonLabel(r.reason, district) })),
                filter.reason,
                reasonLabel(filter.reason, district),
              )}
              value={filter.reason}
              onChange={(e) => setFilter({ ...filter, reason: e.target.value })}
            />
          </label>
        </LiveFieldset>
        {canRedrive && acting && (
          <Link className={btnPrimary} href={redriveHref({ subscriptionId: filter.subscriptionId, reason: filter.reason })}>
            Redrive these {num(filteredDepth)}…
          </Link>
        )}
        {canResolve && acting && (
          <LiveButton
            type="button"
            className={btn}
            onClick={() =>
              onResolve({
                subscriptionId: filter.subscriptionId || undefined,
                subscriptionName: s.bySubscription.find((r) => r.subscriptionId === filter.subscriptionId)?.subscriptionName,
                reason: filter.reason || undefined,
              })
            }
          >
            Resolve these {num(filteredDepth)}…
          </LiveButton>
        )}
      </form>
      {groups.length === 0 ? (
        <EmptyState title={filtered ? "No dead letters match" : "The dead-letter queue is empty"} />
      ) : (
        <GroupsTable groups={groups} countedAt={s.countedAt} canRedrive={canRedrive} canResolve={canResolve} onResolve={onResolve} />
      )}
      {s.groupsSampledAt && (
        <p className="mt-2 text-xs text-slate-600" data-testid="dlq-groups-sampled">
          The groups of the largest subscriptions are as the sampler saw them at <Time iso={s.groupsSampledAt} relative={false} />; the depths above are counted now, and
          a redrive or resolve previews its exact count.
        </p>
      )}
      {!canRedrive && redriveHint && (
        <p className="mt-2 text-xs text-slate-600" data-testid="redrive-hint">
          {redriveHint}
        </p>
      )}
    </Card>
  );
}

/**
 * The page's address with ?range= set, the other parameters kept: a reload or a shared link opens the same window.
 * Through the browser's history without Next.js's own state, which Next.js then follows, so useSearchParams sees it.
 */
function keepRangeInUrl(hours: number) {
  const url = new URL(window.location.href);
  url.searchParams.set("range", rangeParam(hours));
  window.history.replaceState(null, "", url);
}

function HistoryCard({ initial, initialAt, chosen }: { initial: History & { hours: number }; initialAt: number; chosen: boolean }) {
  const [hours, setHours] = useState<number>(initial.hours);
  const district = useViewerTenant() !== null;
  const history = usePolled<History>(`/api/v1/dlq/history?hours=${hours}`, {
    initialData: hours === initial.hours ? initial : undefined,
    initialAt,
    intervalMs: 15_000,
  });
  const to = history.dataUpdatedAt || initialAt;
  const pick = (h: number) => {
    setHours(h);
    keepRangeInUrl(h);
  };
  return (
    <Card title="Over time" id="dlq-history" actions={<SegmentedControl label="Time range" options={RANGES} value={hours} onChange={pick} />}>
      {!chosen && hours === initial.hours && initial.hours < 24 && (
        <p className="-mt-1 mb-2 text-xs text-slate-600" data-testid="dlq-range-why">
          The last {hours === 1 ? "hour" : `${hours} hours`}: every change of the last day happened in it.
        </p>
      )}
      {history.isPending && <Skeleton lines={6} />}
      {history.isError && !history.data && <ErrorState error={history.error} retry={() => history.refetch()} />}
      {history.data &&
        (history.data.points.length === 0 ? (
          <EmptyState title="No samples in this range yet">
            {district ? "Depth and age are recorded every 15 seconds." : "The sampler records depth and age every 15 seconds while the dashboard runs."}
          </EmptyState>
        ) : (
          <DlqCharts points={history.data.points} gaps={history.data.gaps} from={to - hours * 3600_000} to={to} />
        ))}
    </Card>
  );
}

type List = { q: string; limit: number; include: string };

/** How many subscriptions have dead letters against how many are listed, and a search (a plain GET: it works before hydration). */
function ListedSubscriptions({ s, list }: { s: DlqSummary; list: List }) {
  // The chart's window as chosen (in the URL once picked), kept across a search.
  const hours = rangeFromParam(useSearchParams().get("range"));
  const range = hours === null ? "" : rangeParam(hours);
  const listed = s.bySubscription.length;
  if (!list.q && s.subscriptionCount <= listed) return null;
  const all = count(s.subscriptionCount, "subscription");
  return (
    <Card>
      <form action="/dlq" method="get" role="search" aria-label="Subscriptions with dead letters" className="flex flex-wrap items-end gap-2 text-sm">
        <label className="flex min-w-0 max-w-full flex-col gap-1">
          Find a subscription with dead letters
          <input
            type="search"
            name="q"
            defaultValue={list.q}
            className={`${input} w-72 max-w-full`}
            placeholder="Name, id or tenant"
            aria-label="Find a subscription with dead letters"
          />
        </label>
        <button type="submit" className={btn}>
          Find
        </button>
        {/* The chart's window stays as chosen across a search. */}
        {range && <input type="hidden" name="range" value={range} />}
        {list.q && (
          <Link href={range ? `/dlq?range=${range}` : "/dlq"} className="py-1.5 text-blue-700 hover:underline">
            Show the deepest
          </Link>
        )}
      </form>
      <p className="mt-2 text-sm text-slate-700" data-testid="dlq-more">
        {list.q
          ? `${num(s.matchingSubscriptionCount)} of ${all} with dead letters ${s.matchingSubscriptionCount === 1 ? "matches" : "match"} “${list.q}”${s.matchingSubscriptionCount > listed ? `; the deepest ${num(listed)} are listed below` : ""}.`
          : `The deepest ${num(listed)} of ${all} with dead letters are listed below; ${num(s.subscriptionCount - listed)} more ${noun(s.subscriptionCount - listed, "subscription")} with dead letters are counted in the totals and reasons: find one by its name, id or tenant.`}
      </p>
    </Card>
  );
}

export function DlqClient({
  list,
  initial,
  rangeChosen,
  initialAt,
  canRedrive,
  canResolve = false,
  redriveHint = null,
  initialFilter,
}: {
  /** Which subscriptions are listed: the deepest `limit` matching `q`, and `include` (the filter's). */
  list: List;
  initial: { summary: DlqSummary; history: History; hours: number };
  /** The window came from ?range= (else from the data). */
  rangeChosen: boolean;
  initialAt: number;
  canRedrive: boolean;
  canResolve?: boolean;
  /** For a viewer who may not redrive: whom to ask (components/dashboard/page-access.ts redriveHint). */
  redriveHint?: string | null;
  initialFilter: Filter;
}) {
  const [resolving, setResolving] = useState<ResolveTarget | null>(null);
  const filterForm = useRef<HTMLFormElement>(null);
  const query = new URLSearchParams({ limit: String(list.limit), ...(list.q ? { q: list.q } : {}), ...(list.include ? { include: list.include } : {}) });
  const summary = usePolled<DlqSummary>(`/api/v1/dlq?${query}`, { initialData: initial.summary, initialAt });
  const s = summary.data ?? initial.summary;
  // A district reads how the page counts in its words, not the ledger's or the sampler's (docs/GLOSSARY.md).
  const district = useViewerTenant() !== null;

  return (
    <div className="space-y-6">
      <PageHeader
        title="Dead letters"
        description={`Deliveries that stopped trying: how many, how old, why, and ${canRedrive ? "where to redrive them" : "whom to ask to send them again"}.`}
        actions={<UpdatedAgo at={summary.dataUpdatedAt} fetching={summary.isFetching} error={summary.isError ? summary.error : undefined} />}
      />

      <Card>
        <dl className="grid grid-cols-2 gap-4 sm:grid-cols-4">
          <Stat label="Depth now" value={<span data-testid="dlq-depth">{num(s.depth)}</span>} hint={count(s.subscriptionCount, "subscription")} />
          <Stat label="Oldest" value={formatAge(s.oldestAgeSeconds)} hint="age of the oldest dead letter" />
          <Stat label="Reasons" value={s.byReason.length} hint={s.byReason.map((r) => reasonLabel(r.reason, district)).join(", ") || "—"} />
          <Stat
            label="Counted"
            value={<Time iso={s.countedAt} relative={false} className="text-sm font-normal" />}
            hint={district ? "counted at each refresh; the charts every 15 s" : "from the ledger at each refresh; the charts from the sampler (every 15 s)"}
          />
        </dl>
      </Card>

      <ListedSubscriptions s={s} list={list} />

      <HistoryCard initial={{ ...initial.history, hours: initial.hours }} initialAt={initialAt} chosen={rangeChosen} />

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
            first={DEAD_LETTER_REASON_TITLE}
            empty="Nothing dead-lettered"
            rows={s.byReason.map((r) => ({
              key: r.reason ?? "",
              label: (
                <>
                  {reasonLabel(r.reason, district)} {!district && <span className="font-mono text-xs text-slate-500">{r.reason}</span>}
                </>
              ),
              ...r,
            }))}
          />
        </Card>
      </div>

      <GroupsCard
        s={s}
        initialFilter={initialFilter}
        canRedrive={canRedrive}
        canResolve={canResolve}
        redriveHint={redriveHint}
        onResolve={setResolving}
        formRef={filterForm}
      />
      {resolving && (
        <ResolveGroupDialog
          target={resolving}
          onClose={() => setResolving(null)}
          onDone={() => void summary.refetch()}
          // The resolved group's row, or the filter's "Resolve these" button, goes with the letters: the filter stays.
          returnFocus={() => filterForm.current?.querySelector("select")}
        />
      )}
    </div>
  );
}

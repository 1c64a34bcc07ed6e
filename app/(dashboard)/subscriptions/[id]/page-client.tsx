"use client";
import Link from "next/link";
import { useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import type { AnswerGroup, SubscriptionOverview } from "@/lib/dashboard/subscriptions";
import type { DeliveryLite } from "@/lib/dashboard/describe";
import { describeDelivery, formatAge } from "@/lib/dashboard/describe";
import { apiFetch } from "@/lib/client/api";
import { usePolled } from "@/components/dashboard/usePolled";
import { formatClock, formatTime, UpdatedAgo, useNow, useTimeZone } from "@/components/ui/time";
import { Card, EmptyState, ErrorState, Skeleton, Stat, segBtn, StateBadge, btn, btnPrimary, input, ms, pct } from "@/components/ui/kit";
import { DeliveryFilters, NO_FILTERS, type DeliveryFilterValues as Filters } from "@/components/dashboard/DeliveryFilters";
import { OutcomesChart } from "@/components/charts/OutcomesChart";
import { ArchiveControl, ArchivedBadge } from "@/components/subscriptions/ArchiveControl";
import { SigningSecrets } from "@/components/subscriptions/SigningSecrets";
import { EndpointAuth } from "@/components/subscriptions/EndpointAuth";
import { SendTest } from "@/components/subscriptions/SendTest";
import { EndpointHealth } from "@/components/subscriptions/EndpointHealth";
import { RecoverWindowControl } from "@/components/redrive/RecoverWindowControl";
import { FieldError } from "@/components/subscriptions/NewSubscriptionDialog";
import { errorsByField, parseList, parseNumber, waitText } from "@/components/subscriptions/fields";
import { DEFAULT_LADDER_SECONDS } from "@/lib/ledger/retry-policy";
import { LiveButton } from "@/components/ui/LiveButton";
import { useViewerTenant } from "@/components/dashboard/ViewerTenant";

type Initial = {
  overview: SubscriptionOverview;
  answers: { groups: AnswerGroup[]; examined: number };
  deliveries: { items: DeliveryLite[]; nextCursor: string | null };
};
const RANGES = ["1h", "6h", "24h", "7d"] as const;
function sinceText(iso: string, tz: string, now: number): string {
  const d = new Date(iso);
  const days = (now - d.getTime()) / 86400_000;
  if (days < 1) return `since ${formatClock(iso, tz)}`;
  if (days < 7) return `since ${new Intl.DateTimeFormat("en-GB", { weekday: "long", timeZone: tz }).format(d)}`;
  return `since ${new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short", timeZone: tz }).format(d)}`;
}

function PauseControl({ o, onDone }: { o: SubscriptionOverview; onDone: () => void }) {
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState<string | null>(null);
  const [reason, setReason] = useState("");
  const paused = o.state !== "active";
  async function act() {
    setBusy(true);
    setErr(null);
    try {
      await apiFetch(`/api/v1/subscriptions/${encodeURIComponent(o.id)}`, {
        method: "PATCH",
        body: paused ? { state: "active", ...(reason ? { reason } : {}) } : { state: "paused", reason: reason || "paused from the dashboard" },
      });
      setReason("");
      onDone();
    } catch (e) {
      setErr((e as Error).message);
    } finally {
      setBusy(false);
    }
  }
  return (
    <div className="flex flex-wrap items-center gap-2">
      <label className="sr-only" htmlFor="pause-reason">
        Reason
      </label>
      <input
        id="pause-reason"
        className={`${input} w-56`}
        placeholder={paused ? "Reason (optional)" : "Reason, e.g. district maintenance"}
        value={reason}
        onChange={(e) => setReason(e.target.value)}
      />
      <LiveButton className={paused ? btnPrimary : btn} disabled={busy} onClick={act}>
        {busy ? "Saving…" : paused ? "Resume deliveries" : "Pause deliveries"}
      </LiveButton>
      {err && (
        <p role="alert" className="w-full text-sm text-red-800">
          {err}
        </p>
      )}
    </div>
  );
}

type ConfigField = "name" | "url" | "eventTypes" | "ladder" | "timeoutMs" | "rate" | "concurrency" | "tenant";
const CONFIG_PATHS: Record<ConfigField, string[]> = {
  tenant: ["body.tenant"],
  name: ["body.name"],
  url: ["body.url"],
  eventTypes: ["body.eventTypes"],
  ladder: ["body.retryPolicy", "body.retryPolicy.ladderSeconds"],
  timeoutMs: ["body.retryPolicy.timeoutMs"],
  rate: ["body.rateLimitPerSecond"],
  concurrency: ["body.maxConcurrency"],
};

function ConfigForm({ o, canEdit, onDone }: { o: SubscriptionOverview; canEdit: boolean; onDone: () => void }) {
  const policy = (o.retryPolicy ?? {}) as { ladderSeconds?: number[]; maxAgeSeconds?: number; timeoutMs?: number };
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState(o.name);
  const [url, setUrl] = useState(o.url);
  const [types, setTypes] = useState(o.eventTypes.join(", "));
  const [ladder, setLadder] = useState(policy.ladderSeconds?.join(", ") ?? "");
  const [timeoutMs, setTimeoutMs] = useState(policy.timeoutMs ? String(policy.timeoutMs) : "");
  const [rate, setRate] = useState(o.rateLimitPerSecond ? String(o.rateLimitPerSecond) : "");
  const [concurrency, setConcurrency] = useState(String(o.maxConcurrency));
  const [tenant, setTenant] = useState(o.tenant ?? "");
  const district = useViewerTenant();
  // Moving a subscription between tenants is a global admin's: the tenants list answers only them (403 otherwise), so
  // the choice is offered exactly when the server would accept it; a district's viewer never asks.
  const tenants = useQuery({
    queryKey: ["/api/v1/tenants"],
    queryFn: ({ signal }) => apiFetch<{ items: { id: string; name: string }[] }>("/api/v1/tenants", { signal }),
    enabled: editing && !district,
    retry: false,
    staleTime: 60_000,
  });
  const canMove = !district && tenants.isSuccess;
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const rows: [string, React.ReactNode][] = [
    ["Name", o.name],
    ["Tenant", o.tenant ? (district?.id === o.tenant ? district.name : o.tenant) : "none: every tenant's events"],
    [
      "Endpoint URL",
      <span key="u" className="break-all font-mono text-xs">
        {o.url}
      </span>,
    ],
    ["Event types", o.eventTypes.join(", ")],
    ["Retry ladder", `${policy.ladderSeconds ? "" : "default: "}${(policy.ladderSeconds ?? DEFAULT_LADDER_SECONDS).map(waitText).join(" → ")}`],
    ["Attempt timeout", policy.timeoutMs ? `${policy.timeoutMs} ms` : "default"],
    ["Rate limit", o.rateLimitPerSecond ? `${o.rateLimitPerSecond}/s` : "none"],
    ["Max concurrency", String(o.maxConcurrency)],
  ];
  const { fields: errs, other: otherError } = errorsByField(error, CONFIG_PATHS);
  const invalid = (f: ConfigField) => (errs[f] ? { "aria-invalid": true, "aria-describedby": `config-${f}-error` } : {});
  async function save(e: React.FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      // Only what changed is sent: an untouched field is never re-validated or re-audited.
      const body: Record<string, unknown> = {};
      if (name !== o.name) body.name = name;
      if (url.trim() !== o.url) body.url = url.trim();
      const eventTypes = types.split(/[\s,]+/).filter(Boolean);
      if (eventTypes.join() !== o.eventTypes.join()) body.eventTypes = eventTypes;
      const retryPolicy: Record<string, unknown> = { ...(o.retryPolicy as object) };
      if (ladder.trim()) retryPolicy.ladderSeconds = parseList(ladder);
      else delete retryPolicy.ladderSeconds;
      const t = parseNumber(timeoutMs);
      if (t !== undefined) retryPolicy.timeoutMs = t;
      else delete retryPolicy.timeoutMs;
      if (JSON.stringify(retryPolicy) !== JSON.stringify(o.retryPolicy ?? {})) body.retryPolicy = retryPolicy;
      const r = parseNumber(rate) ?? null;
      if (r !== o.rateLimitPerSecond) body.rateLimitPerSecond = r;
      const c = parseNumber(concurrency);
      if (c !== undefined && c !== o.maxConcurrency) body.maxConcurrency = c;
      if (canMove && tenant !== (o.tenant ?? "")) body.tenant = tenant || null;
      if (Object.keys(body).length > 0) await apiFetch(`/api/v1/subscriptions/${encodeURIComponent(o.id)}`, { method: "PATCH", body });
      setEditing(false);
      onDone();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }
  return (
    <Card
      title="Configuration"
      id="config"
      actions={
        canEdit && !editing ? (
          <LiveButton className={btn} onClick={() => setEditing(true)}>
            Edit
          </LiveButton>
        ) : null
      }
    >
      {!editing ? (
        <dl className="grid grid-cols-1 gap-x-6 gap-y-2 text-sm sm:grid-cols-2">
          {rows.map(([k, v]) => (
            <div key={k} className="min-w-0">
              <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">{k}</dt>
              <dd className="text-slate-900">{v}</dd>
            </div>
          ))}
        </dl>
      ) : (
        <form onSubmit={save} noValidate className="grid grid-cols-1 gap-3 text-sm sm:grid-cols-2" aria-label="Edit configuration">
          <label className="flex flex-col gap-1">
            Name
            <input className={input} value={name} onChange={(e) => setName(e.target.value)} {...invalid("name")} />
            <FieldError id="config-name-error" message={errs.name} />
          </label>
          <label className="flex flex-col gap-1">
            Max concurrency, requests at once
            <input className={input} inputMode="numeric" value={concurrency} onChange={(e) => setConcurrency(e.target.value)} {...invalid("concurrency")} />
            <FieldError id="config-concurrency-error" message={errs.concurrency} />
          </label>
          <label className="flex flex-col gap-1 sm:col-span-2">
            Endpoint URL
            <input className={input} value={url} onChange={(e) => setUrl(e.target.value)} {...invalid("url")} />
            <FieldError id="config-url-error" message={errs.url} />
          </label>
          {canMove && (
            <label className="flex flex-col gap-1 sm:col-span-2">
              Tenant (moving it takes its future deliveries to that district&apos;s view)
              <select className={input} value={tenant} onChange={(e) => setTenant(e.target.value)} {...invalid("tenant")}>
                <option value="">None: every tenant&apos;s events</option>
                {tenants.data.items.map((t) => (
                  <option key={t.id} value={t.id}>
                    {t.name} ({t.id})
                  </option>
                ))}
              </select>
              <FieldError id="config-tenant-error" message={errs.tenant} />
            </label>
          )}
          <label className="flex flex-col gap-1 sm:col-span-2">
            {district ? "Event types (comma-separated)" : "Event types (comma-separated; * for all, admins only)"}
            <input className={input} value={types} onChange={(e) => setTypes(e.target.value)} {...invalid("eventTypes")} />
            <FieldError id="config-eventTypes-error" message={errs.eventTypes} />
          </label>
          <label className="flex flex-col gap-1">
            Retry ladder, seconds between attempts (empty: default)
            <input className={input} value={ladder} onChange={(e) => setLadder(e.target.value)} placeholder="30, 120, 600, 3600, 21600, 86400" {...invalid("ladder")} />
            <FieldError id="config-ladder-error" message={errs.ladder} />
          </label>
          <label className="flex flex-col gap-1">
            Attempt timeout, ms (empty: default)
            <input className={input} inputMode="numeric" value={timeoutMs} onChange={(e) => setTimeoutMs(e.target.value)} placeholder="15000" {...invalid("timeoutMs")} />
            <FieldError id="config-timeoutMs-error" message={errs.timeoutMs} />
          </label>
          <label className="flex flex-col gap-1">
            Rate limit per second (empty: none)
            <input className={input} inputMode="numeric" value={rate} onChange={(e) => setRate(e.target.value)} {...invalid("rate")} />
            <FieldError id="config-rate-error" message={errs.rate} />
          </label>
          <div className="flex items-end gap-2">
            <button type="submit" className={btnPrimary} disabled={busy}>
              {busy ? "Saving…" : "Save"}
            </button>
            <button type="button" className={btn} onClick={() => (setEditing(false), setError(null))}>
              Cancel
            </button>
          </div>
          {otherError && (
            <p role="alert" className="text-red-800 sm:col-span-2">
              {otherError}
            </p>
          )}
        </form>
      )}
    </Card>
  );
}

function DeliveriesList({
  o,
  initial,
  initialAt,
  filters,
  setFilters,
}: {
  o: SubscriptionOverview;
  initial: Initial["deliveries"];
  initialAt: number;
  filters: Filters;
  setFilters: (f: Filters) => void;
}) {
  const tz = useTimeZone();
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const qs = new URLSearchParams({ limit: "25" });
  if (filters.state) qs.set("state", filters.state);
  if (filters.eventType) qs.set("eventType", filters.eventType);
  if (filters.statusCode) qs.set("statusCode", filters.statusCode);
  if (filters.errorClass) qs.set("errorClass", filters.errorClass);
  if (filters.from) qs.set("from", new Date(filters.from).toISOString());
  if (filters.to) qs.set("to", new Date(filters.to).toISOString());
  if (cursor) qs.set("cursor", cursor);
  const isInitial = !cursor && Object.values(filters).every((v) => !v);
  const res = usePolled<Initial["deliveries"]>(`/api/v1/dashboard/subscriptions/${encodeURIComponent(o.id)}/deliveries?${qs}`, {
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
        <button type="button" className="mb-2 text-sm text-blue-700 hover:underline" onClick={() => (setCursors([]), setFilters(NO_FILTERS))}>
          Clear filters
        </button>
      )}
      {res.isPending && <Skeleton lines={5} />}
      {res.isError && !res.data && <ErrorState error={res.error} retry={() => res.refetch()} />}
      {res.data && res.data.items.length === 0 && <EmptyState title="No deliveries match">Change or clear the filters.</EmptyState>}
      {res.data && res.data.items.length > 0 && (
        <ul className="divide-y divide-slate-100" data-testid="deliveries-list">
          {res.data.items.map((d) => (
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
                <StateBadge state={d.state} />
              </span>
            </li>
          ))}
        </ul>
      )}
      <div className="mt-3 flex flex-wrap items-center gap-2">
        <button type="button" className={btn} disabled={cursors.length === 0} onClick={() => setCursors([])}>
          Newest
        </button>
        <button type="button" className={btn} disabled={cursors.length === 0} onClick={() => setCursors((c) => c.slice(0, -1))}>
          ← Newer
        </button>
        <button type="button" className={btn} disabled={!res.data?.nextCursor} onClick={() => res.data?.nextCursor && setCursors((c) => [...c, res.data!.nextCursor!])}>
          Older →
        </button>
        <span className="text-xs text-slate-600">Page {cursors.length + 1}</span>
      </div>
    </Card>
  );
}

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
  const tz = useTimeZone();
  const now = useNow(15_000);
  const qc = useQueryClient();
  const district = useViewerTenant();
  const [range, setRange] = useState<(typeof RANGES)[number]>("24h");
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const id = initial.overview.id;
  const ov = usePolled<SubscriptionOverview>(`/api/v1/dashboard/subscriptions/${encodeURIComponent(id)}?range=${range}`, {
    initialData: range === "24h" ? initial.overview : undefined,
    initialAt,
  });
  const answers = usePolled<Initial["answers"]>(`/api/v1/dashboard/subscriptions/${encodeURIComponent(id)}/answers`, {
    initialData: initial.answers,
    initialAt,
    intervalMs: 15_000,
  });
  const o = ov.data ?? initial.overview;
  const refresh = () => qc.invalidateQueries();
  const c = o.counts;
  const held = o.state !== "active";
  const archived = Boolean(o.archivedAt);
  const [notice, setNotice] = useState<string | null>(null);

  return (
    <div className="space-y-6">
      <nav aria-label="Breadcrumb" className="text-sm text-slate-600">
        <Link href="/subscriptions" className="hover:underline">
          Subscriptions
        </Link>{" "}
        / {o.name}
      </nav>
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0">
          <h1 className="flex flex-wrap items-center gap-2 text-2xl font-semibold">
            {o.name} {archived ? <ArchivedBadge /> : <StateBadge state={o.state} />}
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
          {!archived && held && o.stateReason && (
            <p className="mt-1 text-sm text-amber-900">
              {o.state === "paused" ? "Paused" : "Disabled"}: {o.stateReason}. New deliveries are held, not dropped.
            </p>
          )}
        </div>
        <div className="flex flex-col items-end gap-2">
          <div className="flex flex-wrap items-start justify-end gap-2">
            {canPause && !archived && <PauseControl o={o} onDone={refresh} />}
            {canArchive && (
              <ArchiveControl
                subscriptionId={o.id}
                name={o.name}
                archived={archived}
                queued={c.pending + c.scheduled}
                onDone={(m) => {
                  setNotice(m);
                  refresh();
                }}
              />
            )}
          </div>
          <UpdatedAgo at={ov.dataUpdatedAt} fetching={ov.isFetching} error={ov.isError ? ov.error : undefined} />
        </div>
      </div>

      <Card>
        <dl className="grid grid-cols-2 gap-4 sm:grid-cols-3 lg:grid-cols-6">
          <Stat label="Success 1 h" value={pct(o.h1.successRate)} hint={`${o.h1.delivered} of ${o.h1.attempts} attempts`} />
          <Stat label="Success 24 h" value={pct(o.h24.successRate)} hint={`${o.h24.delivered} of ${o.h24.attempts} attempts`} />
          <Stat label="p50 / p95 1 h" value={`${ms(o.h1.p50Ms)} / ${ms(o.h1.p95Ms)}`} hint={`24 h: ${ms(o.h24.p50Ms)} / ${ms(o.h24.p95Ms)}`} />
          <Stat
            label={held ? "Held" : "Queued"}
            value={<span data-testid="queued-count">{c.pending >= 10001 ? "10,000+" : c.pending.toLocaleString()}</span>}
            hint={held ? "waiting for resume" : "due to send"}
          />
          <Stat label="Retrying / sending" value={`${c.scheduled.toLocaleString()} / ${c.inFlight}`} />
          <Stat
            label="Dead letters"
            value={c.deadLetter.toLocaleString()}
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

      <Card
        title="Outcomes over time"
        id="outcomes"
        actions={
          <div role="group" aria-label="Time range" className="flex gap-1">
            {RANGES.map((r) => (
              <button key={r} type="button" aria-pressed={range === r} className={segBtn(range === r)} onClick={() => setRange(r)}>
                {r}
              </button>
            ))}
          </div>
        }
      >
        {ov.isPending ? <Skeleton lines={6} /> : <OutcomesChart points={o.series} label={`Attempt outcomes, last ${range}`} />}
      </Card>

      <Card title="What the endpoint has been answering" id="answers">
        {answers.data && answers.data.groups.length === 0 ? (
          <EmptyState title="No failed answers recently">
            {answers.data.examined ? `All of the last ${answers.data.examined.toLocaleString()} attempts succeeded.` : "No attempts yet."}
          </EmptyState>
        ) : (
          <ul className="space-y-2" data-testid="answer-groups">
            {answers.data?.groups.map((g, i) => (
              <li key={i} className="flex flex-col gap-1 rounded-md border border-slate-200 p-2 sm:flex-row sm:items-center sm:justify-between">
                <div className="min-w-0 text-sm">
                  <span className="font-semibold text-slate-900">{g.count.toLocaleString()} ×</span>{" "}
                  <span className="font-semibold text-red-800">{g.statusCode ?? g.errorClass ?? "error"}</span>{" "}
                  <span className="break-words text-slate-800">{g.signature || g.errorClass}</span>{" "}
                  <span className="text-slate-600" title={`first ${g.firstAt}, last ${g.lastAt}`}>
                    {sinceText(g.firstAt, tz, now)}, last {formatTime(g.lastAt, tz)}
                  </span>
                </div>
                <div className="flex shrink-0 gap-2">
                  <button
                    type="button"
                    className={`${btn} px-2 py-1 text-xs`}
                    onClick={() =>
                      setFilters({ ...NO_FILTERS, statusCode: g.statusCode ? String(g.statusCode) : "", errorClass: g.statusCode ? "" : (g.errorClass ?? "") })
                    }
                  >
                    Show deliveries
                  </button>
                  {canRedrive && (
                    <Link
                      className={`${btn} px-2 py-1 text-xs`}
                      href={`/dlq/redrive?${new URLSearchParams({ subscriptionId: o.id, ...(g.statusCode ? { statusCode: String(g.statusCode) } : {}), ...(g.errorClass ? { errorClass: g.errorClass } : {}) })}`}
                    >
                      Redrive these…
                    </Link>
                  )}
                </div>
              </li>
            ))}
          </ul>
        )}
        {answers.data && answers.data.examined > 0 && (
          <p className="mt-2 text-xs text-slate-600">
            From the last {answers.data.examined.toLocaleString()} attempts; similar answers are grouped (long numbers and ids folded to #).
          </p>
        )}
      </Card>

      <DeliveriesList o={o} initial={initial.deliveries} initialAt={initialAt} filters={filters} setFilters={setFilters} />

      <ConfigForm
        key={`${o.name}|${o.tenant}|${o.url}|${o.eventTypes.join()}|${JSON.stringify(o.retryPolicy)}|${o.rateLimitPerSecond}|${o.maxConcurrency}`}
        o={o}
        canEdit={canEdit && !archived}
        onDone={refresh}
      />

      <EndpointHealth subscriptionId={o.id} held={c.pending + c.scheduled} />

      <SigningSecrets subscriptionId={o.id} canRotate={canRotate && !archived} canExpire={canExpireSecret} />
      <EndpointAuth subscriptionId={o.id} canEdit={canEdit && !archived} />
      <SendTest subscriptionId={o.id} canSend={canEdit} />
      <RecoverWindowControl subscriptionId={o.id} canStart={canRedrive && !archived} />
    </div>
  );
}

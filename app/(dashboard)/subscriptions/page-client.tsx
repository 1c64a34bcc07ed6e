"use client";
import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { useEffect, useRef, useState } from "react";
import { useQueryClient } from "@tanstack/react-query";
import type { SubscriptionHealth } from "@/lib/dashboard/subscriptions";
import { listQueryString, parseListState, type ListState, type SubscriptionSort } from "@/lib/subscriptions/list-state";
import { formatAge } from "@/lib/dashboard/describe";
import { usePolled } from "@/components/dashboard/usePolled";
import { UpdatedAgo, useHydrated, useNow } from "@/components/ui/time";
import { EmptyState, ErrorState, SubscriptionStateBadge, btn, btnPrimary, input, ms, pct } from "@/components/ui/kit";
import { NewSubscriptionDialog } from "@/components/subscriptions/NewSubscriptionDialog";
import { LiveButton } from "@/components/ui/LiveButton";
import { ArchivedBadge } from "@/components/subscriptions/ArchiveControl";
import { FailingSince, LastAnswer } from "@/components/subscriptions/FailingSince";
import { useViewerTenant } from "@/components/dashboard/ViewerTenant";
import { useTenantIds } from "@/components/ui/TenantPicker";
import { count, num, possessive } from "@/lib/words";

type Page = { items: SubscriptionHealth[]; nextCursor: string | null; prevCursor: string | null };

// The orders the server pages in (lib/subscriptions/list.ts); the health figures are a page's own, so they do not sort.
const SORTS: { value: SubscriptionSort; label: string }[] = [
  { value: "name", label: "Name, A to Z" },
  { value: "-name", label: "Name, Z to A" },
  { value: "tenant", label: "Tenant" },
  { value: "state", label: "State (active first)" },
  { value: "-state", label: "State (paused first)" },
  { value: "-created", label: "Newest first" },
  { value: "created", label: "Oldest first" },
];

/** How long the search box waits after the last keystroke before it asks the server. */
const SEARCH_DEBOUNCE_MS = 300;

/**
 * The list's state is its URL, so a reload or a shared link shows the same page. The controls write the URL with the
 * browser's own history (a page turn pushes an entry the back button steps back through; a new search or filter
 * replaces it), which Next.js follows without asking the server to render the page again: the rows and the URL change
 * together, and a reload at any moment reloads what is on screen. The state is also held here, set at once, because
 * Next.js hands the new URL to useSearchParams a moment later (a checkbox would spring back until then). Back, forward
 * and the header's Subscriptions link change the URL by other means, and the list, the search box and the tenant box
 * then show the URL's.
 */
function useListState(district: boolean) {
  const params = useSearchParams();
  const parsed = parseListState((name) => params.get(name));
  // A district's viewer has one tenant: no tenant filter.
  const fromUrl = district ? { ...parsed, tenant: "" } : parsed;
  const urlKey = listQueryString(fromUrl);
  const [state, setState] = useState(fromUrl);
  const [text, setText] = useState(fromUrl.q);
  const [tenantText, setTenantText] = useState(fromUrl.tenant);
  const [seen, setSeen] = useState(urlKey);
  if (seen !== urlKey) {
    setSeen(urlKey);
    // Not a URL written here (those equal the state already): what the URL says is what the page shows.
    if (urlKey !== listQueryString(state)) {
      setState(fromUrl);
      setText(fromUrl.q);
      setTenantText(fromUrl.tenant);
    }
  }
  /** `turn`: a page turn, a new history entry; a new search or filter replaces the entry. */
  const go = (patch: Partial<ListState>, turn = false) => {
    // Any change but a page turn starts again from the first page.
    const next = { ...state, cursor: "", ...patch };
    setState(next);
    const qs = listQueryString(next);
    const href = `${window.location.pathname}${qs ? `?${qs}` : ""}`;
    if (turn) window.history.pushState(null, "", href);
    else window.history.replaceState(null, "", href);
  };
  return { state, go, text, setText, tenantText, setTenantText };
}

/** `context`: the endpoint is failing now; the rollups' rate (a minute behind) is shown, but not in reassuring green. */
function Rate({ w, context = false }: { w: SubscriptionHealth["h1"]; context?: boolean }) {
  const r = w.successRate;
  const color = r === null || context ? "text-slate-500" : r >= 0.99 ? "text-emerald-800" : r >= 0.9 ? "text-amber-800" : "text-red-800";
  return (
    <span className={`font-medium ${color}`} title={`${w.delivered} of ${w.attempts} attempts delivered`}>
      {pct(r)}
      <span className="block text-xs font-normal text-slate-500">{num(w.attempts)} att.</span>
    </span>
  );
}

function Queue({ s }: { s: SubscriptionHealth }) {
  const c = s.counts;
  const held = s.state !== "active";
  const parts = [
    // The words of docs/GLOSSARY.md; a paused or disabled subscription's pending and scheduled deliveries are held.
    c.pending ? `${c.pending >= 10001 ? "10,000+" : num(c.pending)} ${held ? "held" : "pending"}` : null,
    c.scheduled ? `${num(c.scheduled)} ${held ? "held, to retry" : "scheduled"}` : null,
    c.inFlight ? `${c.inFlight} in flight` : null,
  ].filter(Boolean);
  return <span className="text-slate-800">{parts.length ? parts.join(", ") : <span className="text-slate-500">empty</span>}</span>;
}

function Dlq({ s, now }: { s: SubscriptionHealth; now: number }) {
  if (!s.counts.deadLetter) return <span className="text-slate-500">0</span>;
  return (
    <span className="font-medium text-red-800">
      {num(s.counts.deadLetter)}
      <span className="block text-xs font-normal text-slate-600">oldest {formatAge(s.dlqOldestAt ? (now - new Date(s.dlqOldestAt).getTime()) / 1000 : null)}</span>
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

export function SubscriptionsClient({
  initial,
  initialState,
  initialAt,
  pageSize,
  tenants,
  tenantsMore,
  canCreate,
  canSubscribeAll,
  eventTypes,
  eventTypesMore,
}: {
  initial: Page;
  initialState: ListState;
  initialAt: number;
  pageSize: number;
  tenants: string[];
  /** More tenants have subscriptions than `tenants` holds (the suggestions are cut; any id may still be typed). */
  tenantsMore: boolean;
  canCreate: boolean;
  canSubscribeAll: boolean;
  eventTypes: string[];
  /** More event types exist than `eventTypes` holds (the list is cut; any type may still be typed). */
  eventTypesMore: boolean;
}) {
  const qc = useQueryClient();
  // A district's viewer has one tenant: no tenant filter, and its own district named instead of "every endpoint".
  const district = useViewerTenant();
  const now = useNow(15_000);
  const hydrated = useHydrated(); // a change before React listens would be lost (or undone by hydration): every control waits for it
  const [creating, setCreating] = useState(false);
  const { state, go, text, setText, tenantText, setTenantText } = useListState(Boolean(district));
  const typing = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(typing.current), []);
  const search = (value: string, wait: number) => {
    setText(value);
    clearTimeout(typing.current);
    typing.current = setTimeout(() => {
      if (value.trim() !== state.q) go({ q: value.trim() });
    }, wait);
  };
  const initialQs = listQueryString(initialState, pageSize);
  const qs = listQueryString(state, pageSize);
  const res = usePolled<Page>(`/api/v1/dashboard/subscriptions?${qs}`, { initialData: qs === initialQs ? initial : undefined, initialAt });
  const page = res.data ?? { items: [], nextCursor: null, prevCursor: null };
  const items = page.items;
  const filtered = Boolean(state.q || state.state || state.tenant);

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h1 className="text-2xl font-semibold">Subscriptions</h1>
          <p className="mt-1 text-sm text-slate-700">
            {district ? `Health of ${possessive(district.name)} endpoints` : "Health of every endpoint"}: success rate and latency over the last hour and day, what is
            queued, what is dead-lettered.
          </p>
        </div>
        <div className="flex flex-wrap items-center gap-3">
          <UpdatedAgo at={res.dataUpdatedAt} fetching={res.isFetching} error={res.isError ? res.error : undefined} />
          {canCreate && (
            <LiveButton className={btnPrimary} onClick={() => setCreating(true)}>
              New subscription
            </LiveButton>
          )}
        </div>
      </div>
      <div className="flex flex-wrap items-end gap-3" role="search">
        <label className="flex min-w-64 flex-1 flex-col gap-1 text-sm text-slate-700 sm:max-w-md">
          Search
          <input
            type="search"
            disabled={!hydrated}
            className={input}
            value={text}
            maxLength={200}
            placeholder={district ? "Name, id or URL" : "Name, id, URL or tenant"}
            onChange={(e) => search(e.target.value, SEARCH_DEBOUNCE_MS)}
            onKeyDown={(e) => {
              if (e.key === "Enter") search(text, 0);
            }}
          />
        </label>
        {!district && (
          <TenantFilter tenants={tenants} tenantsMore={tenantsMore} text={tenantText} setText={setTenantText} current={state.tenant} go={go} disabled={!hydrated} />
        )}
        <label className="flex flex-col gap-1 text-sm text-slate-700">
          State
          <select disabled={!hydrated} className={input} value={state.state} onChange={(e) => go({ state: e.target.value as ListState["state"] })}>
            <option value="">Any state</option>
            <option value="active">Active</option>
            <option value="paused">Paused</option>
            <option value="disabled">Disabled</option>
          </select>
        </label>
        <SortSelect value={state.sort} withTenant={!district} disabled={!hydrated} onChange={(sort) => go({ sort })} />
        <label className="flex items-center gap-2 pb-2 text-sm text-slate-700">
          <input type="checkbox" disabled={!hydrated} checked={state.archived} onChange={(e) => go({ archived: e.target.checked })} />
          Show archived
        </label>
      </div>
      {creating && (
        <NewSubscriptionDialog
          tenants={tenants}
          eventTypes={eventTypes}
          eventTypesMore={eventTypesMore}
          canSubscribeAll={canSubscribeAll && !district}
          onClose={() => setCreating(false)}
          onCreated={() => qc.invalidateQueries()}
        />
      )}
      {res.isError && !res.data && <ErrorState error={res.error} retry={() => res.refetch()} />}
      <ListStatus page={page} loaded={Boolean(res.data)} q={state.q} filtered={filtered} />
      {items.length === 0 ? (
        <EmptyList paged={Boolean(state.cursor)} q={state.q} filtered={filtered} district={district?.name ?? null} canCreate={canCreate} go={go} />
      ) : (
        <SubscriptionsTable items={items} now={now} showTenant={!district} />
      )}
      <Pager page={page} paged={Boolean(state.cursor)} loading={res.isPlaceholderData} pageSize={pageSize} go={go} />
      <p className="text-xs text-slate-600">Success rates and latency are counted by the minute and refreshed every 15 s; the queue and dead-letter counts are live.</p>
    </div>
  );
}

/**
 * The tenant filter: typed, with suggestions (a select of thousands of districts is no way to choose one). What is
 * typed applies after a pause, as a search does: the suggestions are the first districts only, not the list of what
 * may be typed, and a district beyond them had filtered nothing until Enter.
 */
function TenantFilter(p: {
  tenants: string[];
  tenantsMore: boolean;
  text: string;
  setText: (v: string) => void;
  current: string;
  go: (patch: Partial<ListState>) => void;
  disabled: boolean;
}) {
  const { text, setText, current, go, disabled } = p;
  const { ids: tenants, live } = useTenantIds(text, p.tenants);
  const typing = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(typing.current), []);
  const apply = (value: string, wait: number) => {
    setText(value);
    clearTimeout(typing.current);
    typing.current = setTimeout(() => {
      if (value.trim() !== current) go({ tenant: value.trim() });
    }, wait);
  };
  return (
    <label className="flex flex-col gap-1 text-sm text-slate-700">
      Tenant
      <input
        disabled={disabled}
        className={input}
        list="subscription-tenants"
        value={text}
        maxLength={200}
        placeholder="All tenants"
        // A suggestion picked (or the box cleared) applies at once; anything typed, after the search's pause.
        onChange={(e) => apply(e.target.value, e.target.value === "" || tenants.includes(e.target.value) ? 0 : SEARCH_DEBOUNCE_MS)}
        onKeyDown={(e) => {
          if (e.key === "Enter") apply(text, 0);
        }}
      />
      <datalist id="subscription-tenants">
        {tenants.map((t) => (
          <option key={t} value={t} />
        ))}
      </datalist>
      {!live && p.tenantsMore && (
        <span className="text-xs text-slate-600" data-testid="tenant-suggestions-cut">
          Suggests the first {num(tenants.length)} by id; type any tenant&apos;s id.
        </span>
      )}
    </label>
  );
}

/** What a screen reader hears after a search, a filter or a page turn: how many subscriptions the list now shows. */
function ListStatus({ page, loaded, q, filtered }: { page: Page; loaded: boolean; q: string; filtered: boolean }) {
  const n = page.items.length;
  const text = !loaded
    ? ""
    : n > 0
      ? `Showing ${count(n, "subscription")}${page.nextCursor ? "; more on the next page" : ""}.`
      : filtered
        ? `0 subscriptions match ${q ? `“${q}”` : "these filters"}.`
        : "0 subscriptions.";
  return (
    <p role="status" className="sr-only">
      {text}
    </p>
  );
}

/** One table for every width: below md each row reflows into a card (the column name shown inline), so there is one copy of each row in the DOM. */
function SubscriptionsTable({ items, now, showTenant }: { items: Page["items"]; now: number; showTenant: boolean }) {
  return (
    <div className="relative md:overflow-x-auto md:rounded-lg md:border md:border-slate-200 md:bg-white md:shadow-sm">
      <table className="block w-full text-left text-sm md:table">
        <caption className="sr-only">Subscriptions, one page, in the order chosen above</caption>
        <thead className="hidden bg-slate-50 text-slate-700 md:table-header-group">
          <tr>
            {["Subscription", "State", "Success 1 h", "Success 24 h", "p50 / p95", "Queue", "DLQ", "Last failed answer"].map((h) => (
              <th key={h} scope="col" className="px-3 py-2 font-medium">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody className="block space-y-3 md:table-row-group md:space-y-0">
          {items.map((s) => (
            <tr
              key={s.id}
              data-testid="subscription-row"
              data-failing={s.failing ? "true" : "false"}
              className="block rounded-lg border border-slate-200 bg-white p-3 align-top shadow-sm md:table-row md:rounded-none md:border-0 md:border-t md:p-0 md:shadow-none md:hover:bg-slate-50"
            >
              {/* Names, ids and tenants are anyone's text: a long word breaks rather than push the card off a phone. */}
              <td className="block pb-1 wrap-anywhere md:table-cell md:px-3 md:py-2">
                <Link href={`/subscriptions/${encodeURIComponent(s.id)}`} className="font-medium text-blue-700 hover:underline">
                  {s.name}
                </Link>
                <div className="font-mono text-xs text-slate-500">{s.id}</div>
                {showTenant && <div className="text-xs text-slate-600">{s.tenant ?? "all tenants"}</div>}
              </td>
              <Cell label="State">
                {/* An archived subscription's state waits for an unarchive; "archived" is what is true now. */}
                {s.archivedAt ? <ArchivedBadge /> : <SubscriptionStateBadge s={s} />}
                <span className="mt-1 block">
                  <FailingSince s={s} brief />
                </span>
              </Cell>
              <Cell label="Success 1 h">
                <Rate w={s.h1} context={Boolean(s.failing)} />
              </Cell>
              <Cell label="Success 24 h">
                <Rate w={s.h24} context={Boolean(s.failing)} />
              </Cell>
              <Cell label="p50 / p95" className="whitespace-nowrap text-slate-800">
                {ms(s.h1.p50Ms)} / {ms(s.h1.p95Ms)}
                <span className="block text-xs text-slate-500">
                  24 h: {ms(s.h24.p50Ms)} / {ms(s.h24.p95Ms)}
                </span>
              </Cell>
              <Cell label="Queue">
                <Queue s={s} />
                <span className="block text-xs text-slate-500">{num(s.counts.delivered24h)} delivered 24 h</span>
              </Cell>
              <Cell label="DLQ">
                <Dlq s={s} now={now} />
              </Cell>
              <Cell label="Last failed answer" className="md:max-w-xs">
                <LastAnswer s={s} clamp />
              </Cell>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * First, previous and next page, shown when there is more than one page. While the next page loads, the one on
 * screen is the previous page (keepPreviousData) with its own cursors, so the buttons wait: a second click would
 * ask for the same page again.
 */
function Pager(p: { page: Page; paged: boolean; loading: boolean; pageSize: number; go: (patch: Partial<ListState>, turn?: boolean) => void }) {
  const { page, paged, loading, pageSize, go } = p;
  if (!(page.prevCursor || page.nextCursor || paged)) return null;
  return (
    <nav aria-label="Pages" className="flex flex-wrap items-center justify-between gap-3 text-sm">
      <div className="flex gap-2">
        {paged && (
          <LiveButton type="button" className={btn} onClick={() => go({}, true)}>
            First page
          </LiveButton>
        )}
        <LiveButton type="button" className={btn} disabled={loading || !page.prevCursor} onClick={() => page.prevCursor && go({ cursor: page.prevCursor }, true)}>
          ← Previous
        </LiveButton>
        <LiveButton type="button" className={btn} disabled={loading || !page.nextCursor} onClick={() => page.nextCursor && go({ cursor: page.nextCursor }, true)}>
          Next →
        </LiveButton>
      </div>
      <span className="text-slate-600">{pageSize} a page</span>
    </nav>
  );
}

/** What an empty page says, and what the viewer can do about it. */
function EmptyList(p: { paged: boolean; q: string; filtered: boolean; district: string | null; canCreate: boolean; go: (patch: Partial<ListState>) => void }) {
  const { paged, q, filtered, district, canCreate, go } = p;
  return paged ? (
    <EmptyState title="Nothing on this page">
      <LiveButton type="button" className={btn} onClick={() => go({})}>
        Back to the first page
      </LiveButton>
    </EmptyState>
  ) : filtered ? (
    <EmptyState title={q ? `No subscription matches “${q}”` : "No subscription matches these filters"}>
      Search by part of a name, an id, a URL or a tenant, or clear the filters.
    </EmptyState>
  ) : (
    <EmptyState title={district ? `${district} has no subscriptions yet` : "No subscriptions yet"}>
      {canCreate ? "Create one with New subscription." : "A manager creates them; ask one."}
    </EmptyState>
  );
}

/** The server-side orders; a district's viewer, who sees one tenant, is not offered the order by tenant. */
function SortSelect({
  value,
  withTenant,
  disabled,
  onChange,
}: {
  value: SubscriptionSort;
  withTenant: boolean;
  disabled: boolean;
  onChange: (sort: SubscriptionSort) => void;
}) {
  return (
    <label className="flex flex-col gap-1 text-sm text-slate-700">
      Sort by
      <select disabled={disabled} className={input} value={value} onChange={(e) => onChange(e.target.value as SubscriptionSort)}>
        {SORTS.filter((o) => withTenant || o.value !== "tenant").map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </label>
  );
}

"use client";
import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { useEffect, useState } from "react";
import { fullTitle, lookupTitle } from "@/lib/page-title";
import type { LookupResult } from "@/lib/dashboard/lookup";
import { deliveryReceipt, describeDelivery, eventTypeInWords, formatAbsolute, subjectInWords, type DeliveryLite } from "@/lib/dashboard/describe";
import { usePolled } from "@/components/dashboard/usePolled";
import { formatTime, tzLabel, UpdatedAgo, useTimeZone } from "@/components/ui/time";
import { CopyButton } from "@/components/dashboard/CopyButton";
import { EmptyState, ErrorState, Skeleton, StateBadge, SubLink, btn, btnPrimary, input, textLink } from "@/components/ui/kit";
import { useViewerTenant } from "@/components/dashboard/ViewerTenant";
import { DistrictOverview } from "@/components/dashboard/DistrictOverview";
import { deliveryBadgeState } from "@/components/ui/labels";
import { noun, possessive } from "@/lib/words";

const TONE: Record<string, string> = {
  ok: "border-l-emerald-600",
  wait: "border-l-amber-500",
  held: "border-l-slate-500",
  bad: "border-l-red-600",
};
const TONE_TEXT: Record<string, string> = { ok: "text-emerald-900", wait: "text-amber-900", held: "text-slate-800", bad: "text-red-900" };

/** What the event is about: its type in words and its subject values, the first thing a ticket names. */
function About({ type, subject, summary = [] }: { type: string; subject?: Record<string, string>; summary?: [string, string][] }) {
  const subjectParts = subjectInWords(subject);
  // The catalog's summary fields after the subject, each value once.
  const parts = [...subjectParts, ...summary.filter(([k, v]) => !subjectParts.some(([sk, sv]) => sk === k || sv === v))];
  return (
    <p className="min-w-0 text-sm text-slate-700 wrap-anywhere" data-testid="event-about">
      <span className="font-semibold text-slate-900">{eventTypeInWords(type)}</span>
      {parts.map(([k, v]) => (
        <span key={k}>
          {" · "}
          <span className="text-slate-500">{k}</span> <span className="break-words font-mono text-xs text-slate-900">{v}</span>
        </span>
      ))}
    </p>
  );
}

function DeliveryResult({ d, tz }: { d: DeliveryLite; tz: string }) {
  const fmt = (iso: string) => formatTime(iso, tz);
  const sentence = describeDelivery(d, fmt);
  const receipt = deliveryReceipt(d, (iso) => formatAbsolute(iso, tz));
  return (
    <li className={`rounded-lg border border-l-4 border-slate-200 bg-white p-4 shadow-sm ${TONE[sentence.tone]}`} data-testid="delivery-result">
      <div className="flex flex-wrap items-start justify-between gap-2">
        <About type={d.eventType} subject={d.subject} summary={d.summary} />
        <StateBadge state={deliveryBadgeState(d.state, d.subscriptionState)} />
      </div>
      <p className={`mt-1 break-words text-base font-semibold ${TONE_TEXT[sentence.tone]}`} data-testid="delivery-sentence">
        {sentence.text}
      </p>
      <dl className="mt-2 grid grid-cols-1 gap-x-6 gap-y-1 text-sm text-slate-700 sm:grid-cols-2 lg:grid-cols-3">
        <div className="min-w-0">
          <dt className="inline text-slate-500">Event </dt>
          {/* The type beside the id is part of the term's description: a <dl>'s group holds only <dt> and <dd>. */}
          <dd className="inline">
            <span className="break-all font-mono text-xs">{d.eventId}</span> <span className="text-xs text-slate-500 wrap-anywhere">({d.eventType})</span>
          </dd>
        </div>
        <div className="min-w-0">
          <dt className="inline text-slate-500">Subscription </dt>
          <dd className="inline">
            <SubLink id={d.subscriptionId} name={d.subscriptionName} />
            {d.tenant && <span className="text-slate-500"> · {d.tenant}</span>}
          </dd>
        </div>
        <div className="min-w-0">
          <dt className="inline text-slate-500">Attempts made </dt>
          <dd className="inline" data-testid="attempts-made">
            {/* As the timeline counts them: this run's against its most (until one was answered), and all of them once a
                redrive began another run. */}
            {d.attemptCount}
            {d.state !== "delivered" && ` of at most ${d.maxAttempts}`}
            {d.totalAttempts !== d.attemptCount && `; ${d.totalAttempts} in all`}
          </dd>
        </div>
        <div className="min-w-0 sm:col-span-2 lg:col-span-3">
          <dt className="inline text-slate-500">Delivery key </dt>
          <dd className="inline break-all font-mono text-xs" data-testid="delivery-key">
            {d.deliveryKey}
          </dd>
        </div>
      </dl>
      <div className="mt-3 flex flex-wrap items-center gap-2">
        <Link href={`/deliveries/${d.id}`} className={btn}>
          View timeline
        </Link>
        <CopyButton text={receipt} label="Copy receipt" />
        <details className="w-full text-sm">
          <summary className="cursor-pointer text-slate-600 hover:text-slate-900">Show receipt</summary>
          <pre className="mt-2 overflow-x-auto rounded bg-slate-50 p-3 text-xs text-slate-800" data-testid="receipt">
            {receipt}
          </pre>
        </details>
      </div>
    </li>
  );
}

/** An event that arrived but that no subscription took: received, and why nothing was sent. */
function UnroutedResult({ e, tz }: { e: LookupResult["unrouted"][number]; tz: string }) {
  return (
    <li className="rounded-lg border border-l-4 border-slate-200 border-l-slate-500 bg-white p-4 shadow-sm" data-testid="unrouted-result">
      <About type={e.type} subject={e.subject} />
      <p className="mt-1 break-words text-base font-semibold text-slate-800">
        Received at {formatTime(e.receivedAt, tz)}, no endpoint subscribed to {e.type}
        {e.tenant ? ` for ${e.tenant}` : ""}
      </p>
      <p className="mt-1 text-sm text-slate-700">
        Nothing was sent: when the event arrived, no subscription {e.tenant ? "of this district " : ""}listed this event type. Event{" "}
        <span className="break-all font-mono text-xs">{e.id}</span>.
      </p>
    </li>
  );
}

export function LookupClient({ initialQuery, initial, initialAt }: { initialQuery: string; initial: LookupResult | null; initialAt: number }) {
  const tz = useTimeZone();
  // A district's viewer lands on its own endpoints; the search below answers within its district only.
  const district = useViewerTenant();
  // The search is the URL's (a reload or a shared link asks again); the box shows it whenever the URL changes (back,
  // forward, the header's link), and what is typed until then.
  const q = (useSearchParams().get("q") ?? "").trim().slice(0, 200);
  const [text, setText] = useState(q);
  const [seenQ, setSeenQ] = useState(q);
  if (seenQ !== q) {
    setSeenQ(q);
    setText(q);
  }
  // A search changes the URL without a server render, so the title the page was rendered with would stay.
  useEffect(() => {
    document.title = fullTitle(lookupTitle(q));
  }, [q]);
  const url = q ? `/api/v1/dashboard/lookup?q=${encodeURIComponent(q)}` : null;
  const res = usePolled<LookupResult>(url, { initialData: q === initialQuery && initial ? initial : undefined, initialAt });

  function submit(e: React.FormEvent) {
    e.preventDefault();
    const v = text.trim();
    // The browser's history, which Next.js follows, rather than router.replace: that would also render the page on the
    // server, running the same search a second time, and the URL would wait for it.
    window.history.replaceState(null, "", v ? `/?q=${encodeURIComponent(v)}` : "/");
  }

  return (
    <div className="space-y-6">
      <div>
        <h1 className="text-2xl font-semibold">Did it arrive?</h1>
        <p className="mt-1 text-slate-700">
          {district
            ? `Search ${possessive(district.name)} deliveries for one thing: an event id, a student or assignment id, a subscription, or a delivery key.`
            : "Search one thing: an event id, a student or assignment id, a district, a subscription, or a delivery key."}
        </p>
      </div>
      {/* action: before React listens, the browser's own GET of /?q= is the same search. */}
      <form onSubmit={submit} action="/" role="search" className="flex flex-col gap-2 sm:flex-row">
        <label htmlFor="lookup-q" className="sr-only">
          Search deliveries
        </label>
        <input
          id="lookup-q"
          name="q"
          type="search"
          autoFocus
          autoComplete="off"
          spellCheck={false}
          value={text}
          onChange={(e) => setText(e.target.value)}
          placeholder={district ? "e.g. stu_881, evt_1001, asg_7" : "e.g. stu_881, evt_1001, Lincoln USD, asg_7"}
          className={`${input} w-full py-2.5 text-base sm:flex-1`}
        />
        <button type="submit" className={`${btnPrimary} py-2.5 text-base`}>
          Search
        </button>
      </form>

      {!q && district && <DistrictOverview district={district} />}
      {!q && !district && (
        <EmptyState title="Start with whatever the ticket mentions">
          A parent&apos;s ticket usually names a student and an assignment; paste either. Times are shown in {tzLabel(tz)}.
        </EmptyState>
      )}
      {q && res.isPending && (
        <div className="rounded-lg border border-slate-200 bg-white p-4" role="status" aria-label="Searching">
          <Skeleton lines={4} />
        </div>
      )}
      {q && res.isError && !res.data && <ErrorState error={res.error} retry={() => res.refetch()} />}
      {q && res.data && (
        <div className="space-y-4">
          <div className="flex flex-wrap items-center justify-between gap-2">
            <p className="min-w-0 text-sm text-slate-700 wrap-anywhere" aria-live="polite">
              {res.data.deliveries.length === 0
                ? res.data.unrouted.length > 0
                  ? `Received, but not sent anywhere: no delivery for “${res.data.q}”.`
                  : `No deliveries match “${res.data.q}”.`
                : `${res.data.deliveries.length}${res.data.truncated ? "+" : ""} ${noun(res.data.deliveries.length, "delivery", "deliveries")} for “${res.data.q}”, newest first. Times in ${tzLabel(tz)}.`}
            </p>
            <UpdatedAgo at={res.dataUpdatedAt} fetching={res.isFetching} error={res.isError ? res.error : undefined} />
          </div>
          {res.data.subscriptions.length > 0 && (
            <div className="rounded-lg border border-slate-200 bg-white p-3 text-sm wrap-anywhere">
              <span className="text-slate-600">Matching subscriptions: </span>
              {res.data.subscriptions.map((s, i) => (
                <span key={s.id}>
                  {i > 0 && ", "}
                  <SubLink id={s.id} name={s.name} /> <StateBadge state={s.state} />
                </span>
              ))}
              {res.data.subscriptionsTruncated && (
                <>
                  {" "}
                  and more:{" "}
                  <Link href={`/subscriptions?q=${encodeURIComponent(res.data.q)}`} className={textLink}>
                    every match on Subscriptions
                  </Link>
                </>
              )}
            </div>
          )}
          {res.data.unrouted.length > 0 && (
            <ul className="space-y-3">
              {res.data.unrouted.map((e) => (
                <UnroutedResult key={e.id} e={e} tz={tz} />
              ))}
            </ul>
          )}
          {res.data.deliveries.length === 0 && res.data.unrouted.length === 0 ? (
            <EmptyState title="Nothing found">
              Nothing was published with that id or subject value. Check the spelling, or try the student id instead of the name.
            </EmptyState>
          ) : res.data.deliveries.length === 0 ? null : (
            <ul className="space-y-3">
              {res.data.deliveries.map((d) => (
                <DeliveryResult key={d.id} d={d} tz={tz} />
              ))}
            </ul>
          )}
          {res.data.truncated && <p className="text-sm text-slate-600">Showing the newest {res.data.deliveries.length}. Search a more specific id to narrow it.</p>}
        </div>
      )}
    </div>
  );
}

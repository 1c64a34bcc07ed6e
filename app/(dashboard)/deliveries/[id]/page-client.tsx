"use client";
import Link from "next/link";
import { useState } from "react";
import type { DeliveryDetail } from "@/lib/dashboard/delivery";
import { aboutEvent, deliveryReceipt, describeDelivery, formatAbsolute } from "@/lib/dashboard/describe";
import { usePolled } from "@/components/dashboard/usePolled";
import { formatTime, Time, UpdatedAgo, useTimeZone } from "@/components/ui/time";
import { CopyButton } from "@/components/dashboard/CopyButton";
import { Card, StateBadge, SubLink, btn } from "@/components/ui/kit";
import { LiveButton } from "@/components/ui/LiveButton";
import {
  ATTEMPT_OUTCOME_SENTENCES,
  ATTEMPT_TRIGGER_LABELS,
  ATTEMPT_TRIGGER_WORDS,
  AUDIT_ACTION_LABELS,
  AUDIT_ACTION_WORDS,
  DEAD_LETTER_REASON_LABELS,
  ERROR_CLASS_LABELS,
  RESOLUTION_LABELS,
  labelOf,
} from "@/components/ui/labels";
import { actorInWords, num } from "@/lib/words";
import { INTERRUPTED_ERROR_CLASSES } from "@/lib/ledger/states";
import { errorInWords } from "@/lib/dashboard/error-words";
import { useViewerTenant } from "@/components/dashboard/ViewerTenant";

type Item =
  | { kind: "created"; at: string }
  | { kind: "attempt"; at: string; a: DeliveryDetail["attempts"][number] }
  | { kind: "audit"; at: string; e: DeliveryDetail["history"][number] }
  | { kind: "correction"; at: string; c: DeliveryDetail["corrections"][number] };

const sentenceCase = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * One attempt's facts. A district's viewer gets them in its words: the error class without the ledger's name for it,
 * what made the attempt (a first send, a scheduled retry, someone sending it again) rather than the trigger's name, no
 * worker process id, and no message hookledger wrote about its own worker when sending was interrupted (the outcome's
 * sentence says what that means for the endpoint); engineers keep all of them to find the process.
 */
function AttemptRow({ a, district }: { a: DeliveryDetail["attempts"][number]; district: boolean }) {
  const facts: [string, React.ReactNode][] = [
    ["Status", a.statusCode ? `HTTP ${a.statusCode}` : "no HTTP answer"],
    ["Error class", a.errorClass ? `${labelOf(ERROR_CLASS_LABELS, a.errorClass)}${district ? "" : ` (${a.errorClass})`}` : "—"],
    ["Duration", a.durationMs != null ? `${a.durationMs} ms` : "—"],
    district
      ? [
          "Kind",
          `${a.trigger === "scheduled" && a.attemptNumber === 1 ? "First send" : labelOf(ATTEMPT_TRIGGER_WORDS, a.trigger)}${a.actor ? ` by ${actorInWords(a.actor)}` : ""}`,
        ]
      : ["Trigger", `${labelOf(ATTEMPT_TRIGGER_LABELS, a.trigger)}${a.actor ? ` by ${actorInWords(a.actor)}` : ""}`],
    ["Retry-After", a.retryAfterSeconds != null ? `${a.retryAfterSeconds} s` : "—"],
    ...(district ? [] : ([["Worker", a.workerId ?? "—"]] as [string, React.ReactNode][])),
  ];
  const message = district && a.errorClass && INTERRUPTED_ERROR_CLASSES.includes(a.errorClass) ? null : a.errorMessage;
  return (
    <div>
      <p className="font-medium text-slate-900">
        Attempt {a.attemptNumber}: {labelOf(ATTEMPT_OUTCOME_SENTENCES, a.outcome)}
        {a.ambiguous && (
          <span
            className="ml-2 rounded bg-amber-100 px-1.5 py-0.5 text-xs font-medium text-amber-900"
            title="The request may have reached the receiver (timeout or reset after sending); retried with the same key"
          >
            ambiguous
          </span>
        )}
      </p>
      <dl className="mt-1 grid grid-cols-2 gap-x-4 gap-y-0.5 text-sm sm:grid-cols-3">
        {facts.map(([k, v]) => (
          <div key={k} className="min-w-0">
            <dt className="inline text-slate-500">{k}: </dt>
            <dd className="inline break-words text-slate-800">{v}</dd>
          </div>
        ))}
      </dl>
      {message && (district ? <DistrictError errorClass={a.errorClass} message={message} /> : <p className="mt-1 text-sm text-red-900">{message}</p>)}
      {a.responseExcerpt && (
        <details className="mt-1 text-sm">
          <summary className="cursor-pointer text-slate-600 hover:text-slate-900">Response excerpt</summary>
          <pre className="mt-1 max-h-60 overflow-auto whitespace-pre-wrap break-all rounded bg-slate-50 p-2 text-xs">{a.responseExcerpt}</pre>
        </details>
      )}
    </div>
  );
}

/**
 * A failed attempt's error as a district's viewer reads it: what happened to its endpoint in words ("Your endpoint refused
 * the connection (nothing was listening at 127.0.0.1:4801)."), the message as stored a click away for whoever debugs
 * the endpoint. A message with no words here (a redirect's, one the sender wrote plainly) shows as it is.
 */
function DistrictError({ errorClass, message }: { errorClass: string | null; message: string }) {
  const words = errorInWords(errorClass, message);
  if (!words) return <p className="mt-1 text-sm text-red-900">{message}</p>;
  return (
    <div className="mt-1 text-sm" data-testid="attempt-error">
      <p className="text-red-900">{words}.</p>
      <details>
        <summary className="cursor-pointer text-slate-600 hover:text-slate-900">Details</summary>
        <code className="mt-1 block break-all rounded bg-slate-50 p-2 text-xs text-slate-800">{message}</code>
      </details>
    </div>
  );
}

/** A fixed_at_source resolution's corrected event, when the operator named one: a link to its deliveries. */
function CorrectedEventLink({ details }: { details: unknown }) {
  const id = (details as { correctedEventId?: unknown } | null)?.correctedEventId;
  if (typeof id !== "string") return null;
  return (
    <p className="text-sm text-slate-700" data-testid="corrected-event">
      Corrected event:{" "}
      <Link href={`/?q=${encodeURIComponent(id)}`} className="break-all font-mono text-xs text-blue-700 hover:underline">
        {id}
      </Link>
    </p>
  );
}

/** What happened to the delivery, oldest first: its creation, every attempt, every operator decision, and where it is now. */
function Timeline({ d, now }: { d: DeliveryDetail; now: string }) {
  const district = useViewerTenant() !== null;
  const items: Item[] = [
    { kind: "created" as const, at: d.createdAt },
    ...d.attempts.map((a) => ({ kind: "attempt" as const, at: a.startedAt, a })),
    ...d.history.map((e) => ({ kind: "audit" as const, at: e.at, e })),
    ...d.corrections.map((c) => ({ kind: "correction" as const, at: c.at, c })),
  ].sort((x, y) => x.at.localeCompare(y.at));
  return (
    <Card title="Timeline" id="timeline">
      <ol className="relative space-y-4 border-l-2 border-slate-200 pl-5">
        {items.map((it, i) => (
          <li key={i} className="relative">
            <span
              aria-hidden
              className={`absolute -left-[27px] top-1.5 h-3 w-3 rounded-full ring-2 ring-white ${
                it.kind === "attempt"
                  ? it.a.outcome === "delivered"
                    ? "bg-emerald-600"
                    : it.a.outcome === "dead_letter"
                      ? "bg-red-600"
                      : "bg-amber-500"
                  : it.kind === "audit" || it.kind === "correction"
                    ? "bg-blue-600"
                    : "bg-slate-400"
              }`}
            />
            <Time iso={it.at} className="text-xs text-slate-600" />
            {it.kind === "created" && <p className="font-medium text-slate-900">Event published; delivery queued</p>}
            {it.kind === "attempt" && <AttemptRow a={it.a} district={district} />}
            {it.kind === "audit" && (
              <div>
                <p className="font-medium text-slate-900">
                  {district ? labelOf(AUDIT_ACTION_WORDS, it.e.action) : sentenceCase(labelOf(AUDIT_ACTION_LABELS, it.e.action))}
                  {it.e.action === "delivery.resolve" && ` as ${labelOf(RESOLUTION_LABELS, (it.e.details as { resolution?: string } | null)?.resolution)}`} by{" "}
                  {actorInWords(it.e.actor)}
                </p>
                {it.e.reason && <p className="text-sm text-slate-700">Why: {it.e.reason}</p>}
                <CorrectedEventLink details={it.e.details} />
              </div>
            )}
            {it.kind === "correction" && (
              <div data-testid="correction">
                <p className="font-medium text-slate-900">
                  This event is the correction of {it.c.eventId ? <span className="break-all font-mono text-xs">{it.c.eventId}</span> : "another event"}: its dead letter{" "}
                  <Link href={`/deliveries/${it.c.deliveryId}`} className="break-all font-mono text-xs text-blue-700 hover:underline">
                    {it.c.deliveryId}
                  </Link>{" "}
                  was resolved as fixed at source by {actorInWords(it.c.actor)}
                </p>
                {it.c.reason && <p className="text-sm text-slate-700">Why: {it.c.reason}</p>}
              </div>
            )}
          </li>
        ))}
        <li className="relative">
          <span aria-hidden className="absolute -left-[27px] top-1.5 h-3 w-3 rounded-full bg-slate-900 ring-2 ring-white" />
          <p className="font-medium text-slate-900">
            Now: <StateBadge state={d.state} /> <span className="font-normal text-slate-700">{now}</span>
          </p>
        </li>
      </ol>
    </Card>
  );
}

export function DeliveryClient({ initial, initialAt, redrive }: { initial: DeliveryDetail; initialAt: number; redrive?: React.ReactNode }) {
  const tz = useTimeZone();
  const district = useViewerTenant();
  const res = usePolled<DeliveryDetail>(`/api/v1/dashboard/deliveries/${initial.id}`, { initialData: initial, initialAt });
  const d = res.data ?? initial;
  const [raw, setRaw] = useState(false);
  const sentence = describeDelivery(d, (iso) => formatTime(iso, tz));
  const rawText = typeof window === "undefined" ? "" : new TextDecoder().decode(Uint8Array.from(atob(d.payload.base64), (c) => c.charCodeAt(0)));

  return (
    <div className="space-y-6">
      <nav aria-label="Breadcrumb" className="text-sm text-slate-600">
        <Link href={`/?q=${encodeURIComponent(d.eventId)}`} className="hover:underline">
          Lookup
        </Link>{" "}
        / <SubLink id={d.subscriptionId} name={d.subscriptionName} /> / delivery
      </nav>
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0 flex-1">
          <h1 className="break-words text-xl font-semibold sm:text-2xl">{aboutEvent(d.eventType, d.subject)}</h1>
          <p className="mt-1 break-words text-lg text-slate-800" data-testid="delivery-sentence">
            {sentence.text}
          </p>
          <p className="mt-1 text-sm text-slate-600">
            Delivery of <span className="break-all font-mono text-xs">{d.eventId}</span>
          </p>
        </div>
        <div className="flex flex-col items-end gap-2">
          <StateBadge state={d.state} />
          <UpdatedAgo at={res.dataUpdatedAt} fetching={res.isFetching} error={res.isError ? res.error : undefined} />
        </div>
      </div>

      <div className="flex flex-wrap items-center gap-2">
        <CopyButton text={deliveryReceipt(d, (iso) => formatAbsolute(iso, tz))} label="Copy receipt" />
        {/* Redrive: components/redrive/RedriveDeliveryButton (the redrive engineer's), rendered by page.tsx */}
        {redrive}
      </div>

      <Card title="Summary" id="summary">
        <dl className="grid grid-cols-1 gap-x-6 gap-y-2 text-sm sm:grid-cols-2">
          {(
            [
              ["Subscription", <SubLink key="s" id={d.subscriptionId} name={d.subscriptionName} />],
              [
                "Endpoint",
                <span key="u" className="break-all font-mono text-xs">
                  {d.subscriptionUrl}
                </span>,
              ],
              district?.id === d.tenant ? ["District", district.name] : ["Tenant", d.tenant ?? "—"],
              [
                "Event",
                <span key="e" className="break-all font-mono text-xs">
                  {d.eventId} ({d.eventType})
                </span>,
              ],
              [
                "Delivery key",
                <span key="k" className="break-all font-mono text-xs">
                  {d.deliveryKey}
                </span>,
              ],
              [
                "Delivery id",
                <span key="i" className="break-all font-mono text-xs">
                  {d.id}
                </span>,
              ],
              ["Created", <Time key="c" iso={d.createdAt} />],
              ["Attempts", `${d.attemptCount} in this run of at most ${d.maxAttempts}; ${d.totalAttempts} in all`],
              ["Next attempt", d.nextAttemptAt ? <Time key="n" iso={d.nextAttemptAt} /> : "—"],
              ["Dead-letter reason", labelOf(DEAD_LETTER_REASON_LABELS, d.deadLetterReason)],
            ] as [string, React.ReactNode][]
          ).map(([k, v]) => (
            <div key={k} className="min-w-0">
              <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">{k}</dt>
              <dd className="text-slate-900">{v}</dd>
            </div>
          ))}
        </dl>
      </Card>

      <Timeline d={d} now={sentence.text} />

      <div className="grid grid-cols-1 gap-6 lg:grid-cols-2">
        <Card title="Request headers as sent" id="headers">
          <table className="w-full text-left text-sm">
            <caption className="sr-only">Request headers; the signature is redacted</caption>
            <tbody>
              {d.requestHeaders.map(([k, v]) => (
                <tr key={k} className="border-t border-slate-100 first:border-0">
                  <th scope="row" className="py-1 pr-3 align-top font-mono text-xs font-medium text-slate-600">
                    {k}
                  </th>
                  <td className="break-all py-1 font-mono text-xs text-slate-900">{v}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <p className="mt-2 text-xs text-slate-600">The signature is never shown. webhook-timestamp is the latest attempt&apos;s.</p>
        </Card>
        <Card
          title={`Payload (${num(d.payload.bytes)} bytes)`}
          id="payload"
          actions={
            <LiveButton type="button" className={btn} onClick={() => setRaw((r) => !r)} aria-pressed={raw}>
              {raw ? "Show pretty-printed" : "Show raw bytes"}
            </LiveButton>
          }
        >
          <pre className="max-h-96 overflow-auto whitespace-pre-wrap break-all rounded bg-slate-50 p-3 text-xs text-slate-900" data-testid="payload">
            {raw ? rawText : (d.payload.pretty ?? rawText)}
          </pre>
          {raw && <p className="mt-2 text-xs text-slate-600">Exactly the bytes that were signed and sent, decoded as UTF-8.</p>}
        </Card>
      </div>
    </div>
  );
}

"use client";
// "Send test": a signed hookledger.ping, the event catalog's example of a type
// the subscription takes, or one of its events by id, sent to the endpoint now, with its headers and client certificate,
// and what the endpoint answered: status, latency, headers and the first 4 KB
// of its body. The way a district confirms a fix before anyone redrives. The
// recent test sends are listed below; none of them is a delivery.
import { useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { apiFetch, ApiError } from "@/lib/client/api";
import { usePolled } from "@/components/dashboard/usePolled";
import { formatTime, useTimeZone } from "@/components/ui/time";
import type { TestSendView as TestSend } from "@/lib/net/test-send";
import { BusySubmit, LiveFieldset } from "@/components/ui/LiveButton";
import { Card, ErrorState, Skeleton, btnPrimary, input, label as labelClass, ms } from "@/components/ui/kit";
import { actorInWords } from "@/lib/words";

type Catalog = { items: { type: string; deprecated: boolean; example: Record<string, unknown> | null }[] };

/** What a test send carries: "ping", "event" (one of the subscription's events, by id) or `example:<type>`. */
type What = "ping" | "event" | `example:${string}`;

/** The catalogued types this subscription takes that have an example, the ones a district can try its handler on. */
function useExamples(eventTypes: string[]) {
  const catalog = useQuery({
    queryKey: ["/api/v1/event-types"],
    queryFn: ({ signal }) => apiFetch<Catalog>("/api/v1/event-types", { signal }),
    retry: false,
    staleTime: 60_000,
  });
  const all = eventTypes.includes("*");
  return (catalog.data?.items ?? []).filter((t) => t.example !== null && !t.deprecated && (all || eventTypes.includes(t.type)));
}

/** What a send carried, in the list's words: an event by id, a type's example, or the ping. */
function carried(t: TestSend): string {
  if (t.eventId) return `event ${t.eventId}`;
  return t.eventType === "hookledger.ping" ? "hookledger.ping" : `example ${t.eventType}`;
}

function StatusText({ t }: { t: TestSend }) {
  if (t.status === null) return <span className="font-semibold text-red-800">No answer ({t.errorClass})</span>;
  const ok = t.status >= 200 && t.status < 300;
  return <span className={`font-semibold ${ok ? "text-emerald-800" : "text-red-800"}`}>HTTP {t.status}</span>;
}

function Answer({ t }: { t: TestSend }) {
  return (
    <div className="mt-3 space-y-2 rounded-md border border-slate-200 p-3 text-sm" data-testid="test-send-result" aria-live="polite">
      <p>
        <StatusText t={t} /> in {ms(t.latencyMs)} · {carried(t)} · <span className="font-mono text-xs">{t.id}</span>
      </p>
      {t.error && <p className="break-words text-red-800">{t.error}</p>}
      {t.headers && Object.keys(t.headers).length > 0 && (
        <details>
          <summary className="cursor-pointer text-slate-700">Response headers ({Object.keys(t.headers).length})</summary>
          <dl className="mt-1 space-y-0.5 font-mono text-xs">
            {Object.entries(t.headers).map(([k, v]) => (
              <div key={k} className="flex min-w-0 gap-2">
                <dt className="shrink-0 text-slate-800">{k}:</dt>
                <dd className="min-w-0 break-all text-slate-600">{v}</dd>
              </div>
            ))}
          </dl>
        </details>
      )}
      {t.body !== null && (
        <div>
          <p className="text-slate-700">Response body (first 4 KB)</p>
          <pre className="mt-1 max-h-48 overflow-auto whitespace-pre-wrap break-all rounded bg-slate-50 p-2 font-mono text-xs text-slate-800">{t.body || "(empty)"}</pre>
        </div>
      )}
    </div>
  );
}

export function SendTest({ subscriptionId, canSend, eventTypes }: { subscriptionId: string; canSend: boolean; eventTypes: string[] }) {
  const tz = useTimeZone();
  const qc = useQueryClient();
  const path = `/api/v1/subscriptions/${encodeURIComponent(subscriptionId)}/test`;
  const recent = usePolled<{ items: TestSend[] }>(path, { intervalMs: 60_000 });
  const [eventId, setEventId] = useState("");
  const [what, setWhat] = useState<What>("ping");
  const examples = useExamples(eventTypes);
  const example = what.startsWith("example:") ? examples.find((t) => `example:${t.type}` === what) : undefined;
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<TestSend | null>(null);
  const [error, setError] = useState<string | null>(null);

  async function send(e: React.FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body = example ? { eventType: example.type } : what === "event" && eventId.trim() ? { eventId: eventId.trim() } : {};
      const r = await apiFetch<TestSend>(path, { body });
      setResult(r);
      void qc.invalidateQueries({ queryKey: [path] });
    } catch (err) {
      setError(err instanceof ApiError ? err.message : "The test could not be sent; check the connection and try again.");
    } finally {
      setBusy(false);
    }
  }

  const items = recent.data?.items ?? [];
  return (
    <Card title="Test sends" id="test-sends">
      {canSend && (
        <form onSubmit={send} className="flex flex-col gap-2 sm:flex-row sm:flex-wrap sm:items-end" aria-label="Send test">
          <LiveFieldset>
            <label className={`${labelClass} min-w-0 sm:w-72`}>
              <span>What to send</span>
              <select className={input} value={what} onChange={(e) => setWhat(e.target.value as What)}>
                <option value="ping">A ping (no data)</option>
                {examples.map((t) => (
                  <option key={t.type} value={`example:${t.type}`}>
                    An example {t.type}
                  </option>
                ))}
                <option value="event">One of its events, by id</option>
              </select>
            </label>
            {what === "event" && (
              <label className={`${labelClass} min-w-0 sm:w-72`}>
                <span>Event id</span>
                <input className={input} value={eventId} onChange={(e) => setEventId(e.target.value)} placeholder="e.g. evt_2026_0001" autoComplete="off" required />
              </label>
            )}
          </LiveFieldset>
          <BusySubmit busy={busy} className={btnPrimary}>
            {busy ? "Sending…" : "Send test"}
          </BusySubmit>
        </form>
      )}
      {example && (
        <div className="mt-2 text-sm" data-testid="test-send-example">
          <p className="text-slate-700">
            The event catalog&apos;s example of <code>{example.type}</code>, sent as its <code>data</code> (Event types has its fields):
          </p>
          <pre className="mt-1 max-h-48 overflow-auto whitespace-pre-wrap break-all rounded bg-slate-50 p-2 font-mono text-xs text-slate-800">
            {JSON.stringify(example.example, null, 2)}
          </pre>
        </div>
      )}
      <p className="mt-2 text-xs text-slate-600">
        Signed like a delivery, with the endpoint&apos;s headers and certificate, marked <code>hookledger-test: 1</code> under its own webhook-id. Not a delivery: it
        changes no counts and no dead letters.
      </p>
      {error && (
        <p role="alert" className="mt-2 text-sm text-red-700">
          {error}
        </p>
      )}
      {result && <Answer t={result} />}
      {recent.isPending && <Skeleton lines={2} />}
      {recent.isError && !recent.data && <ErrorState error={recent.error} retry={() => recent.refetch()} />}
      {items.length > 0 && (
        <>
          <h3 className="mt-4 text-sm font-semibold text-slate-900">Recent test sends</h3>
          <ul className="mt-1 divide-y divide-slate-100 text-sm" data-testid="test-sends-list">
            {items.map((t) => (
              <li key={t.id} className="flex flex-col gap-0.5 py-1.5 sm:flex-row sm:items-center sm:justify-between">
                <span>
                  <StatusText t={t} /> in {ms(t.latencyMs)} · {t.eventId ?? (t.eventType === "hookledger.ping" ? "ping" : `example ${t.eventType}`)}
                </span>
                <span className="text-xs text-slate-600">
                  {formatTime(t.sentAt, tz)} by {actorInWords(t.actor)}
                </span>
              </li>
            ))}
          </ul>
        </>
      )}
    </Card>
  );
}

"use client";
// "Send test": a signed hookledger.ping (or one of this subscription's events,
// by id) sent to the endpoint now, with its headers and client certificate,
// and what the endpoint answered: status, latency, headers and the first 4 KB
// of its body. The way a district confirms a fix before anyone redrives. The
// recent test sends are listed below; none of them is a delivery.
import { useState } from "react";
import { useQueryClient } from "@tanstack/react-query";
import { apiFetch, ApiError } from "@/lib/client/api";
import { usePolled } from "@/components/dashboard/usePolled";
import { formatTime, useTimeZone } from "@/components/ui/time";
import type { TestSendView as TestSend } from "@/lib/net/test-send";
import { BusySubmit } from "@/components/ui/LiveButton";
import { Card, ErrorState, Skeleton, btnPrimary, input, label as labelClass, ms } from "@/components/ui/kit";

function StatusText({ t }: { t: TestSend }) {
  if (t.status === null) return <span className="font-semibold text-red-800">No answer ({t.errorClass})</span>;
  const ok = t.status >= 200 && t.status < 300;
  return <span className={`font-semibold ${ok ? "text-emerald-800" : "text-red-800"}`}>HTTP {t.status}</span>;
}

function Answer({ t }: { t: TestSend }) {
  return (
    <div className="mt-3 space-y-2 rounded-md border border-slate-200 p-3 text-sm" data-testid="test-send-result" aria-live="polite">
      <p>
        <StatusText t={t} /> in {ms(t.latencyMs)} · {t.eventId ? `event ${t.eventId}` : "hookledger.ping"} · <span className="font-mono text-xs">{t.id}</span>
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

export function SendTest({ subscriptionId, canSend }: { subscriptionId: string; canSend: boolean }) {
  const tz = useTimeZone();
  const qc = useQueryClient();
  const path = `/api/v1/subscriptions/${encodeURIComponent(subscriptionId)}/test`;
  const recent = usePolled<{ items: TestSend[] }>(path, { intervalMs: 60_000 });
  const [eventId, setEventId] = useState("");
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<TestSend | null>(null);
  const [error, setError] = useState<string | null>(null);

  async function send(e: React.FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const r = await apiFetch<TestSend>(path, { body: eventId.trim() ? { eventId: eventId.trim() } : {} });
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
        <form onSubmit={send} className="flex flex-col gap-2 sm:flex-row sm:items-end" aria-label="Send test">
          <label className={`${labelClass} min-w-0 sm:w-72`}>
            <span>Event id (optional; empty sends a ping)</span>
            <input className={input} value={eventId} onChange={(e) => setEventId(e.target.value)} placeholder="e.g. evt_2026_0001" autoComplete="off" />
          </label>
          <BusySubmit busy={busy} className={btnPrimary}>
            {busy ? "Sending…" : "Send test"}
          </BusySubmit>
        </form>
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
                  <StatusText t={t} /> in {ms(t.latencyMs)} · {t.eventId ?? "ping"}
                </span>
                <span className="text-xs text-slate-600">
                  {formatTime(t.sentAt, tz)} by {t.actor}
                </span>
              </li>
            ))}
          </ul>
        </>
      )}
    </Card>
  );
}

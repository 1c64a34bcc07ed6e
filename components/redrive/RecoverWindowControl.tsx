"use client";
// On a subscription's page, for engineers: send a window of its deliveries
// again (recover) or deliver its past events it never had (backfill). The form
// previews the exact count (dryRun) before anything is written, then starts
// the paced batch and opens its progress page. Both go through
// POST /api/v1/subscriptions/:id/{recover,backfill}, whose checks (window,
// reason, rate, subscription state) answer here as they would anywhere.
import { useState } from "react";
import { useRouter } from "next/navigation";
import { apiFetch, ApiError } from "@/lib/client/api";
import { btn, btnPrimary, card, input } from "@/components/ui/kit";
import { Field, FormAlert, ReasonInput, TimeField } from "@/components/ui/form";
import { toLocalInput } from "@/components/ui/time";
import { BusySubmit, LiveButton } from "@/components/ui/LiveButton";
import { OPERATOR_REASON_TITLE } from "@/components/ui/labels";
import { num } from "@/lib/words";

type Kind = "recover" | "backfill";
type Preview = { matched: number; byState?: Record<string, number>; since: string; until: string };

function PreviewLine({ preview, kind, rate }: { preview: Preview; kind: Kind; rate: string }) {
  const noun = kind === "recover" ? "deliveries" : "events";
  return (
    <p role="status" className="text-sm text-slate-900 sm:col-span-2" data-testid="recover-preview">
      {num(preview.matched)} {noun} {kind === "recover" ? "would be sent again" : "would get a delivery"}
      {preview.byState && preview.matched
        ? ` (${Object.entries(preview.byState)
            .map(([s, n]) => `${n} ${s.replace("_", " ")}`)
            .join(", ")})`
        : ""}
      {preview.matched ? `, at ${rate}/s: about ${Math.ceil(preview.matched / Math.max(1, Number(rate)))} s.` : ": nothing to do."}
    </p>
  );
}

export function RecoverWindowControl({ subscriptionId, canStart }: { subscriptionId: string; canStart: boolean }) {
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const [kind, setKind] = useState<Kind>("recover");
  const [since, setSince] = useState(() => toLocalInput(new Date(Date.now() - 86_400_000).toISOString()));
  const [until, setUntil] = useState("");
  const [reason, setReason] = useState("");
  const [rate, setRate] = useState("10");
  const [preview, setPreview] = useState<Preview | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (!canStart) return null;

  const body = (dryRun: boolean) => ({
    since: new Date(since).toISOString(),
    ...(until ? { until: new Date(until).toISOString() } : {}),
    reason: reason.trim(),
    ratePerSecond: Number(rate),
    dryRun,
  });
  const url = `/api/v1/subscriptions/${encodeURIComponent(subscriptionId)}/${kind}`;
  // Any change to the request invalidates the preview: Start always sends what was previewed.
  const edit =
    <T,>(set: (v: T) => void) =>
    (v: T) => {
      set(v);
      setPreview(null);
    };

  async function send(dryRun: boolean) {
    setBusy(true);
    setError(null);
    try {
      if (dryRun) setPreview(await apiFetch<Preview>(url, { body: body(true) }));
      else {
        const b = await apiFetch<{ id: string }>(url, { body: body(false) });
        router.push(`/redrives/${b.id}`);
      }
    } catch (err) {
      setError(err instanceof ApiError ? err.message : "The request failed; try again.");
    } finally {
      setBusy(false);
    }
  }

  const noun = kind === "recover" ? "deliveries" : "events";
  return (
    <section className={card} aria-labelledby="recover-title">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <div>
          <h2 id="recover-title" className="text-base font-semibold">
            Send again or backfill
          </h2>
          <p className="text-sm text-slate-600">A district lost data, or joined late: resend a window, or deliver past events it never had. Paced and audited.</p>
        </div>
        {!open && (
          <LiveButton className={btn} onClick={() => setOpen(true)}>
            Recover or backfill…
          </LiveButton>
        )}
      </div>
      {open && (
        <form
          className="mt-3 grid gap-3 sm:grid-cols-2"
          aria-label="Recover or backfill"
          onSubmit={(e) => {
            e.preventDefault();
            void send(false);
          }}
        >
          <fieldset className="sm:col-span-2">
            <legend className="text-sm font-medium text-slate-800">What</legend>
            <div className="mt-1 flex flex-wrap gap-4 text-sm">
              <label className="flex items-center gap-2">
                <input type="radio" name="kind" checked={kind === "recover"} onChange={() => edit(setKind)("recover")} />
                Recover: send its deliveries created in the window again (delivered, resolved, dead letters)
              </label>
              <label className="flex items-center gap-2">
                <input type="radio" name="kind" checked={kind === "backfill"} onChange={() => edit(setKind)("backfill")} />
                Backfill: deliver the window&apos;s past events it has no delivery for
              </label>
            </div>
          </fieldset>
          <TimeField label="From" value={since} onChange={edit(setSince)} required />
          <TimeField label="Until" note="empty: now" value={until} onChange={edit(setUntil)} />
          <Field label={`${OPERATOR_REASON_TITLE} (incident or ticket id)`}>
            <ReasonInput value={reason} onChange={edit(setReason)} placeholder="INC-2301: Madison lost Tuesday's grades" />
          </Field>
          <Field label="Rate (per second)">
            <input className={input} type="number" min={1} max={5000} value={rate} onChange={(e) => edit(setRate)(e.target.value)} required />
          </Field>
          <FormAlert className="sm:col-span-2">{error}</FormAlert>
          {preview && <PreviewLine preview={preview} kind={kind} rate={rate} />}
          <div className="flex flex-wrap gap-2 sm:col-span-2">
            {/* aria-disabled while busy, not disabled: disabling the focused button drops focus to the top of the page. */}
            <button
              type="button"
              className={`${btn} aria-disabled:opacity-50`}
              disabled={reason.trim().length < 3}
              aria-disabled={busy || undefined}
              onClick={() => !busy && void send(true)}
            >
              Preview
            </button>
            <BusySubmit busy={busy} className={btnPrimary} disabled={!preview || preview.matched === 0}>
              {preview && preview.matched ? `${kind === "recover" ? "Recover" : "Backfill"} ${num(preview.matched)} ${noun}` : "Start"}
            </BusySubmit>
            <button
              type="button"
              className={btn}
              onClick={() => {
                setOpen(false);
                setPreview(null);
                setError(null);
              }}
            >
              Close
            </button>
          </div>
        </form>
      )}
    </section>
  );
}

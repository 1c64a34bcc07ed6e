"use client";
// The interactive part of single redrive: a button that opens a small form
// asking for the reason (an incident or ticket id), then POSTs
// /api/v1/deliveries/:id/redrive. Dead-lettered deliveries are redriven with a
// fresh attempt budget; scheduled ones are retried now. Other states have
// nothing to redrive, so nothing is shown.
import { useState } from "react";
import { useRouter } from "next/navigation";
import { apiFetch, ApiError } from "@/lib/client/api";
import { btn, btnPrimary, card, input, label as labelClass } from "@/components/ui/kit";
import { LiveButton } from "@/components/ui/LiveButton";

export function RedriveDeliveryControl({ deliveryId, state, onDone }: { deliveryId: string; state: string; onDone?: () => void }) {
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);

  if (state !== "dead_letter" && state !== "resolved" && state !== "scheduled")
    return done ? (
      <p role="status" className="text-sm text-emerald-700">
        {done}
      </p>
    ) : null;
  const isRedrive = state !== "scheduled";
  const label = isRedrive ? "Redrive" : "Retry now";

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await apiFetch(`/api/v1/deliveries/${encodeURIComponent(deliveryId)}/redrive`, { body: { reason } });
      setDone(isRedrive ? "Redriven: the delivery is due again with a fresh attempt budget." : "Retrying now: the delivery is due.");
      setOpen(false);
      setReason("");
      onDone?.();
      router.refresh();
    } catch (err) {
      setError(err instanceof ApiError ? err.message : "The redrive failed; try again.");
    } finally {
      setBusy(false);
    }
  }

  if (!open)
    return (
      <div className="flex flex-col items-start gap-1">
        <LiveButton onClick={() => setOpen(true)} className={btnPrimary}>
          {label}…
        </LiveButton>
        {done && (
          <p role="status" className="text-sm text-emerald-700">
            {done}
          </p>
        )}
      </div>
    );

  return (
    <form onSubmit={submit} className={`${card} flex max-w-md flex-col gap-2`} aria-label={`${label} this delivery`}>
      <p className="text-sm text-slate-700">
        {isRedrive
          ? "Send this delivery again with the same webhook-id and the same bytes. The attempt budget starts afresh."
          : "Attempt this delivery now instead of waiting for its scheduled retry."}
      </p>
      <label className={labelClass}>
        <span>Reason (incident or ticket id)</span>
        <input
          value={reason}
          onChange={(e) => setReason(e.target.value)}
          required
          minLength={3}
          maxLength={500}
          placeholder="INC-2231: Lincoln fixed their importer"
          className={input}
        />
      </label>
      {error && (
        <p role="alert" className="text-sm text-red-700">
          {error}
        </p>
      )}
      <div className="flex gap-2">
        <button type="submit" disabled={busy || reason.trim().length < 3} className={btnPrimary}>
          {busy ? "Working…" : isRedrive ? "Redrive 1 delivery" : "Retry now"}
        </button>
        <button type="button" onClick={() => setOpen(false)} className={btn}>
          Cancel
        </button>
      </div>
    </form>
  );
}

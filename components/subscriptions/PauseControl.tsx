"use client";
// Pause or resume a subscription's deliveries, with a reason for the audit
// log: a pause holds new deliveries (nothing is dropped), a resume releases them.
import { useState } from "react";
import type { SubscriptionOverview } from "@/lib/dashboard/subscriptions";
import { apiFetch } from "@/lib/client/api";
import { btn, btnPrimary, input } from "@/components/ui/kit";
import { LiveButton } from "@/components/ui/LiveButton";

export function PauseControl({ o, onDone }: { o: SubscriptionOverview; onDone: () => void }) {
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState<string | null>(null);
  const [reason, setReason] = useState("");
  const [done, setDone] = useState("");
  const paused = o.state !== "active";
  async function act() {
    if (busy) return;
    setBusy(true);
    setErr(null);
    setDone("");
    try {
      await apiFetch(`/api/v1/subscriptions/${encodeURIComponent(o.id)}`, {
        method: "PATCH",
        body: paused ? { state: "active", ...(reason ? { reason } : {}) } : { state: "paused", reason: reason || "paused from the dashboard" },
      });
      setReason("");
      setDone(paused ? "Resumed: held deliveries are sent again." : "Paused: new deliveries are held, not dropped, until it is resumed.");
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
      {/* aria-disabled while saving, not disabled: a disabled button drops the keyboard's focus to the top of the page. */}
      <LiveButton className={`${paused ? btnPrimary : btn} aria-disabled:opacity-50`} aria-disabled={busy} onClick={act}>
        {busy ? "Saving…" : paused ? "Resume deliveries" : "Pause deliveries"}
      </LiveButton>
      {/* Always in the page, so a screen reader announces what is put in it. */}
      <p role="status" className="w-full text-sm text-slate-700">
        {done}
      </p>
      {err && (
        <p role="alert" className="w-full text-sm text-red-800">
          {err}
        </p>
      )}
    </div>
  );
}

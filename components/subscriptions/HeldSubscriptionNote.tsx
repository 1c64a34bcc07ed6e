"use client";
// Where a page would otherwise advise an API call ("PATCH /api/v1/subscriptions/…
// {"state":"active"}"): what is held back and why, in words, with the button
// that does it. A paused subscription gets Resume deliveries (the same PATCH
// and audit row as its own page's control); a disabled one, whose endpoint
// answered that it is gone, a link to its page, where its URL is fixed first.
import { useState } from "react";
import Link from "next/link";
import { apiFetch, ApiError } from "@/lib/client/api";
import { btn, btnPrimary } from "@/components/ui/kit";
import { LiveButton } from "@/components/ui/LiveButton";
import { count } from "@/lib/words";

/** `count`: the dead letters a preview left out for it; absent when the filter itself names the subscription. */
export type InactiveSubscription = { subscriptionId: string; state: string; count?: number };

/** The subscription a 409 refused for not being active (lib/redrive/redrive-batches.ts's details), else null. */
export function inactiveSubscriptionOf(err: unknown): InactiveSubscription | null {
  if (!(err instanceof ApiError) || err.status !== 409) return null;
  const d = err.details as { subscriptionId?: unknown; subscriptionState?: unknown } | undefined;
  return typeof d?.subscriptionId === "string" && typeof d.subscriptionState === "string" && d.subscriptionState !== "active"
    ? { subscriptionId: d.subscriptionId, state: d.subscriptionState }
    : null;
}

export function HeldSubscriptionNote({ h, onResumed }: { h: InactiveSubscription; onResumed?: () => void }) {
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState<string | null>(null);
  const [resumed, setResumed] = useState(false);
  const page = `/subscriptions/${encodeURIComponent(h.subscriptionId)}`;
  async function resume() {
    setBusy(true);
    setErr(null);
    try {
      await apiFetch(`/api/v1/subscriptions/${encodeURIComponent(h.subscriptionId)}`, {
        method: "PATCH",
        body: { state: "active", reason: "resumed to redrive its dead letters" },
      });
      setResumed(true);
      onResumed?.();
    } catch (e) {
      setErr((e as Error).message);
    } finally {
      setBusy(false);
    }
  }
  const name = (
    <Link href={page} className="font-mono text-blue-800 hover:underline">
      {h.subscriptionId}
    </Link>
  );
  return (
    <div className="rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-900" data-testid="held-subscription">
      <p>
        {h.count !== undefined ? (
          <>
            Not included: {count(h.count, "delivery", "deliveries")} on {name}, which is {h.state}.{" "}
          </>
        ) : (
          <>
            {name} is {h.state}.{" "}
          </>
        )}
        {resumed
          ? onResumed
            ? "It is resumed."
            : "It is resumed: preview again to include them."
          : h.state === "paused"
            ? "A redrive would only be held: resume it first, then preview again."
            : "Its endpoint answered that it is gone or refused it: fix the URL with the district and enable it on its page, then preview again."}
      </p>
      {!resumed && (
        <div className="mt-2">
          {h.state === "paused" ? (
            <LiveButton className={btnPrimary} disabled={busy} onClick={resume}>
              {busy ? "Resuming…" : "Resume deliveries"}
            </LiveButton>
          ) : (
            <Link href={page} className={btn}>
              Open the subscription
            </Link>
          )}
        </div>
      )}
      {err && (
        <p role="alert" className="mt-1 text-red-800">
          {err}
        </p>
      )}
    </div>
  );
}

"use client";
// Where a page would otherwise advise an API call ("PATCH /api/v1/subscriptions/…
// {"state":"active"}"): what is held back and why, in words, with the button
// that does it. A paused subscription gets Resume deliveries (the same PATCH
// and audit row as its own page's control); a disabled one, whose endpoint
// answered that it is gone, a link to its page, where its URL is fixed first.
import { useEffect, useRef, useState } from "react";
import Link from "next/link";
import { apiFetch, ApiError } from "@/lib/client/api";
import { btn, btnPrimary } from "@/components/ui/kit";
import { BusySubmit } from "@/components/ui/LiveButton";
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

/**
 * `onResumed`: the page takes over once the subscription is resumed (it previews again, and says so where the keyboard's
 * focus then goes). Without it the note stays, says it is resumed, and takes the focus of the button that has gone.
 */
export function HeldSubscriptionNote({ h, onResumed }: { h: InactiveSubscription; onResumed?: () => void }) {
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState<string | null>(null);
  const [resumed, setResumed] = useState(false);
  const message = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (resumed && !onResumed) message.current?.focus();
  }, [resumed, onResumed]);
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
      <p ref={message} tabIndex={-1} className="rounded-sm focus:outline-none focus-visible:ring-2 focus-visible:ring-amber-600">
        {h.count !== undefined ? (
          <>
            Not included: {count(h.count, "delivery", "deliveries")} on {name}, which {resumed ? "was" : "is"} {h.state}.{" "}
          </>
        ) : (
          <>
            {name} {resumed ? "was" : "is"} {h.state}.{" "}
          </>
        )}
        {resumed
          ? onResumed
            ? "It is resumed."
            : "It is resumed, and its deliveries go out again: preview again to include them."
          : h.state === "paused"
            ? "A redrive would only be held: resume it first, then preview again."
            : "Its endpoint answered that it is gone or refused it: fix the URL with the district and enable it on its page, then preview again."}
      </p>
      {!resumed && (
        <div className="mt-2">
          {h.state === "paused" ? (
            // Busy, not disabled, while the request runs: a disabled button drops the keyboard's focus to the top of the page.
            <BusySubmit type="button" busy={busy} className={btnPrimary} onClick={resume}>
              {busy ? "Resuming…" : "Resume deliveries"}
            </BusySubmit>
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

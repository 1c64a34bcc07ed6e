"use client";
// The interactive part of single redrive: a button that opens a small form
// asking for the reason (an incident or ticket id; a district's own words in its portal), then POSTs
// /api/v1/deliveries/:id/redrive. Dead-lettered deliveries are redriven with a
// fresh attempt budget; scheduled ones are retried now. Other states have
// nothing to redrive, so nothing is shown.
import { useState } from "react";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { apiFetch } from "@/lib/client/api";
import { btnPrimary, textLink } from "@/components/ui/kit";
import { ReasonDialog } from "@/components/ui/ReasonDialog";
import { LiveButton } from "@/components/ui/LiveButton";
import { OPERATOR_REASON_TITLE } from "@/components/ui/labels";
import { inactiveSubscriptionOf, type InactiveSubscription } from "@/components/subscriptions/HeldSubscriptionNote";

function Done({ text }: { text: string | null }) {
  if (!text) return null;
  return (
    <p role="status" className="text-sm text-emerald-700">
      {text}
    </p>
  );
}

/**
 * A district (in its portal or signed in to its own account) sends its own delivery to its own endpoint: in its words ("Send again", why it does it),
 * not an operator's redrive with an incident id. The request, the audit row and what the ledger does are the same.
 */
const WORDS = {
  staff: {
    redrive: "Redrive",
    redriveTitle: "Redrive this delivery",
    redriveDescription: "Send this delivery again with the same webhook-id and the same bytes. The attempt budget starts afresh.",
    redriveSubmit: "Redrive 1 delivery",
    redriven: "Redriven: the delivery is due again with a fresh attempt budget.",
    reasonLabel: `${OPERATOR_REASON_TITLE} (incident or ticket id)`,
    placeholder: "INC-2231: Lincoln fixed their importer",
  },
  district: {
    redrive: "Send again",
    redriveTitle: "Send this delivery again",
    redriveDescription:
      "Send this delivery to your endpoint again, with the same webhook-id and the same bytes, so a receiver that skips a webhook-id it has seen recognises it. Its retries start afresh.",
    redriveSubmit: "Send again",
    redriven: "Sent again: the delivery is due now, with its retries afresh; its attempt shows in the timeline.",
    reasonLabel: "Why (kept in the audit log)",
    placeholder: "Importer fixed: term_id is now optional",
  },
} as const;

export function RedriveDeliveryControl({ deliveryId, state, onDone, district = false }: { deliveryId: string; state: string; onDone?: () => void; district?: boolean }) {
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  // Refused because its subscription is paused or disabled: the refusal says to resume it there, and this goes there.
  const [held, setHeld] = useState<InactiveSubscription | null>(null);

  if (state !== "dead_letter" && state !== "resolved" && state !== "scheduled") return <Done text={done} />;
  const isRedrive = state !== "scheduled";
  const w = WORDS[district ? "district" : "staff"];
  const label = isRedrive ? w.redrive : "Retry now";

  if (!open)
    return (
      <div className="flex flex-col items-start gap-1">
        <LiveButton onClick={() => setOpen(true)} className={btnPrimary}>
          {label}…
        </LiveButton>
        <Done text={done} />
      </div>
    );

  return (
    <div className="flex flex-col gap-2">
      <ReasonDialog
        title={isRedrive ? w.redriveTitle : "Retry now this delivery"}
        description={isRedrive ? w.redriveDescription : "Attempt this delivery now instead of waiting for its scheduled retry."}
        reasonLabel={w.reasonLabel}
        placeholder={w.placeholder}
        submitLabel={isRedrive ? w.redriveSubmit : "Retry now"}
        failMessage={district ? "The delivery could not be sent again; try again." : "The redrive failed; try again."}
        onCancel={() => {
          setOpen(false);
          setHeld(null);
        }}
        onSubmit={async (reason) => {
          setHeld(null);
          try {
            await apiFetch(`/api/v1/deliveries/${encodeURIComponent(deliveryId)}/redrive`, { body: { reason } });
          } catch (err) {
            setHeld(inactiveSubscriptionOf(err));
            throw err;
          }
          setDone(isRedrive ? w.redriven : "Retrying now: the delivery is due.");
          setOpen(false);
          onDone?.();
          router.refresh();
        }}
      />
      {held && (
        <Link href={`/subscriptions/${encodeURIComponent(held.subscriptionId)}`} className={`text-sm ${textLink}`} data-testid="held-subscription-link">
          Open the subscription to {held.state === "paused" ? "resume it" : "fix and resume it"}
        </Link>
      )}
    </div>
  );
}

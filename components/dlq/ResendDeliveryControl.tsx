"use client";
// Resend from the delivery page: for a delivered or resolved delivery, a form
// asking for the reason, POSTing /api/v1/deliveries/:id/resend. The receiver
// gets the same webhook-id and bytes with a fresh signature.
import { useState } from "react";
import { useRouter } from "next/navigation";
import { apiFetch } from "@/lib/client/api";
import { RESENDABLE_STATES } from "@/lib/ledger/states";
import { btn } from "@/components/ui/kit";
import { ReasonDialog } from "@/components/ui/ReasonDialog";
import { LiveButton } from "@/components/ui/LiveButton";

export function ResendDeliveryControl({ deliveryId, state }: { deliveryId: string; state: string }) {
  const router = useRouter();
  const [open, setOpen] = useState(false);
  if (!(RESENDABLE_STATES as string[]).includes(state)) return null;
  if (!open)
    return (
      <LiveButton onClick={() => setOpen(true)} className={btn}>
        Resend…
      </LiveButton>
    );
  return (
    <ReasonDialog
      title="Resend this delivery"
      description="Send this delivery again: the same webhook-id and the same bytes, signed afresh. A receiver that de-duplicates on webhook-id will see a repeat."
      reasonLabel="Reason"
      placeholder="District lost Tuesday's import, INC-88"
      submitLabel="Resend 1 delivery"
      failMessage="The resend failed; try again."
      onCancel={() => setOpen(false)}
      onSubmit={async (reason) => {
        await apiFetch(`/api/v1/deliveries/${encodeURIComponent(deliveryId)}/resend`, { body: { reason } });
        setOpen(false);
        router.refresh();
      }}
    />
  );
}

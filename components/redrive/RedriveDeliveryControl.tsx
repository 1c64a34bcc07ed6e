"use client";
// The interactive part of single redrive: a button that opens a small form
// asking for the reason (an incident or ticket id), then POSTs
// /api/v1/deliveries/:id/redrive. Dead-lettered deliveries are redriven with a
// fresh attempt budget; scheduled ones are retried now. Other states have
// nothing to redrive, so nothing is shown.
import { useState } from "react";
import { useRouter } from "next/navigation";
import { apiFetch } from "@/lib/client/api";
import { btnPrimary } from "@/components/ui/kit";
import { ReasonDialog } from "@/components/ui/ReasonDialog";
import { LiveButton } from "@/components/ui/LiveButton";
import { OPERATOR_REASON_TITLE } from "@/components/ui/labels";

function Done({ text }: { text: string | null }) {
  if (!text) return null;
  return (
    <p role="status" className="text-sm text-emerald-700">
      {text}
    </p>
  );
}

export function RedriveDeliveryControl({ deliveryId, state, onDone }: { deliveryId: string; state: string; onDone?: () => void }) {
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const [done, setDone] = useState<string | null>(null);

  if (state !== "dead_letter" && state !== "resolved" && state !== "scheduled") return <Done text={done} />;
  const isRedrive = state !== "scheduled";
  const label = isRedrive ? "Redrive" : "Retry now";

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
    <ReasonDialog
      title={`${label} this delivery`}
      description={
        isRedrive
          ? "Send this delivery again with the same webhook-id and the same bytes. The attempt budget starts afresh."
          : "Attempt this delivery now instead of waiting for its scheduled retry."
      }
      reasonLabel={`${OPERATOR_REASON_TITLE} (incident or ticket id)`}
      placeholder="INC-2231: Lincoln fixed their importer"
      submitLabel={isRedrive ? "Redrive 1 delivery" : "Retry now"}
      failMessage="The redrive failed; try again."
      onCancel={() => setOpen(false)}
      onSubmit={async (reason) => {
        await apiFetch(`/api/v1/deliveries/${encodeURIComponent(deliveryId)}/redrive`, { body: { reason } });
        setDone(isRedrive ? "Redriven: the delivery is due again with a fresh attempt budget." : "Retrying now: the delivery is due.");
        setOpen(false);
        onDone?.();
        router.refresh();
      }}
    />
  );
}

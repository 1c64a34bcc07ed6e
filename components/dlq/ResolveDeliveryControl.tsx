"use client";
// Resolve one dead letter from its delivery page: a form asking for the
// decision (from the ledger's list, lib/ledger/states.ts) and a required
// reason, POSTing /api/v1/deliveries/:id/resolve. Shown for dead letters only.
import { useState } from "react";
import { useRouter } from "next/navigation";
import { apiFetch } from "@/lib/client/api";
import type { Resolution } from "@/lib/ledger/states";
import { btn } from "@/components/ui/kit";
import { ReasonDialog } from "@/components/ui/ReasonDialog";
import { ResolutionSelect } from "./ResolutionSelect";
import { LiveButton } from "@/components/ui/LiveButton";

export function ResolveDeliveryControl({ deliveryId, state }: { deliveryId: string; state: string }) {
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const [resolution, setResolution] = useState<Resolution>("discarded");
  if (state !== "dead_letter") return null;
  if (!open)
    return (
      <LiveButton onClick={() => setOpen(true)} className={btn}>
        Resolve…
      </LiveButton>
    );
  return (
    <ReasonDialog
      title="Resolve this dead letter"
      description="Record that this delivery will not be delivered, and why. It leaves the dead-letter queue; a redrive can reopen it later."
      reasonLabel="Reason"
      placeholder="Westfield decommissioned, INC-2240"
      submitLabel="Resolve 1 delivery"
      failMessage="The resolve failed; try again."
      onCancel={() => setOpen(false)}
      onSubmit={async (reason) => {
        await apiFetch(`/api/v1/deliveries/${encodeURIComponent(deliveryId)}/resolve`, { body: { resolution, reason } });
        setOpen(false);
        router.refresh();
      }}
    >
      <ResolutionSelect value={resolution} onChange={setResolution} />
    </ReasonDialog>
  );
}

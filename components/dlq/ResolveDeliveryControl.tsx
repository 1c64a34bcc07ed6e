"use client";
// Resolve one dead letter from its delivery page: a form asking for the
// decision (from the ledger's list, lib/ledger/states.ts) and a required
// reason, and for fixed_at_source the corrected event's id if there is one,
// POSTing /api/v1/deliveries/:id/resolve. Shown for dead letters only.
import { useState } from "react";
import { useRouter } from "next/navigation";
import { apiFetch } from "@/lib/client/api";
import type { Resolution } from "@/lib/ledger/states";
import { btn, input, label as labelClass } from "@/components/ui/kit";
import { ReasonDialog } from "@/components/ui/ReasonDialog";
import { ResolutionSelect } from "./ResolutionSelect";
import { LiveButton } from "@/components/ui/LiveButton";

export function ResolveDeliveryControl({ deliveryId, state }: { deliveryId: string; state: string }) {
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const [resolution, setResolution] = useState<Resolution>("discarded");
  const [corrected, setCorrected] = useState("");
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
        const correctedEventId = resolution === "fixed_at_source" && corrected.trim() ? corrected.trim() : undefined;
        await apiFetch(`/api/v1/deliveries/${encodeURIComponent(deliveryId)}/resolve`, { body: { resolution, reason, correctedEventId } });
        setOpen(false);
        router.refresh();
      }}
    >
      <ResolutionSelect value={resolution} onChange={setResolution} />
      {resolution === "fixed_at_source" && (
        <label className={labelClass}>
          <span>Corrected event id (optional)</span>
          <input
            className={`${input} font-mono`}
            value={corrected}
            onChange={(e) => setCorrected(e.target.value)}
            placeholder="evt_1002"
            spellCheck={false}
            autoComplete="off"
            aria-describedby="corrected-help"
          />
          <span id="corrected-help" className="text-xs font-normal text-slate-600">
            The event the producer published with the fixed data; both timelines will link to each other.
          </span>
        </label>
      )}
    </ReasonDialog>
  );
}

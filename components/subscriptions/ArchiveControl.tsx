"use client";
// Archive and unarchive from the subscription's page, each with a required
// reason (the audit log keeps it) through the one reason dialog.
import { useState } from "react";
import { apiFetch } from "@/lib/client/api";
import { btn } from "@/components/ui/kit";
import { ReasonDialog } from "@/components/ui/ReasonDialog";
import { LiveButton } from "@/components/ui/LiveButton";
import { num, noun } from "@/lib/words";

export function ArchiveControl({
  subscriptionId,
  name,
  archived,
  queued,
  onDone,
}: {
  subscriptionId: string;
  name: string;
  archived: boolean;
  /** Pending and scheduled deliveries now: what the archive will resolve as superseded. */
  queued: number;
  onDone: (message: string) => void;
}) {
  const [open, setOpen] = useState(false);
  const base = `/api/v1/subscriptions/${encodeURIComponent(subscriptionId)}`;
  return (
    <>
      <LiveButton className={btn} onClick={() => setOpen(true)}>
        {archived ? "Unarchive…" : "Archive…"}
      </LiveButton>
      {open &&
        (archived ? (
          <ReasonDialog
            modal
            title={`Unarchive ${name}`}
            description="It returns to the subscription lists and receives new events again. Deliveries resolved as superseded when it was archived stay resolved (a redrive can reopen them)."
            placeholder="District renewed its contract, INC-3120"
            submitLabel="Unarchive"
            onCancel={() => setOpen(false)}
            onSubmit={async (reason) => {
              await apiFetch(`${base}/unarchive`, { body: { reason } });
              setOpen(false);
              onDone("Unarchived: new events reach it again.");
            }}
          />
        ) : (
          <ReasonDialog
            modal
            danger
            title={`Archive ${name}`}
            description={
              <ul className="list-disc space-y-1 pl-5">
                <li>No new deliveries are created for it.</li>
                <li>
                  {queued === 0 ? "Nothing is queued for it now." : `Its ${num(queued)} queued ${noun(queued, "delivery is", "deliveries are")} resolved as superseded.`}{" "}
                  A delivery on the wire finishes and is recorded.
                </li>
                <li>Its history stays: lookups still find its deliveries. Nothing is deleted, and it can be unarchived.</li>
              </ul>
            }
            placeholder="Westfield decommissioned its SIS, INC-2240"
            submitLabel="Archive subscription"
            busyLabel="Archiving…"
            onCancel={() => setOpen(false)}
            onSubmit={async (reason) => {
              const r = await apiFetch<{ superseded: number; inFlight: number }>(`${base}/archive`, { body: { reason } });
              setOpen(false);
              onDone(
                `Archived. ${num(r.superseded)} queued ${noun(r.superseded, "delivery", "deliveries")} resolved as superseded${r.inFlight ? `; ${r.inFlight} on the wire will be recorded as they finish` : ""}.`,
              );
            }}
          />
        ))}
    </>
  );
}

export function ArchivedBadge() {
  return (
    <span className="inline-flex items-center rounded-full bg-slate-200 px-2 py-0.5 text-xs font-medium text-slate-800 ring-1 ring-inset ring-slate-400">archived</span>
  );
}

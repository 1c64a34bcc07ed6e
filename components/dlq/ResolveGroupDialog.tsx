"use client";
// "Resolve…" on the DLQ page: for one subscription and dead-letter reason (or
// the page's filter), a dialog that first asks the server for the exact count
// (a dry run of POST /api/v1/dlq/resolve), then, with a decision and a
// required reason, resolves them and says how many moved (docs/STYLE.md #9: the
// count first, a confirmation that names it).
import { useEffect, useState } from "react";
import { apiFetch, ApiError } from "@/lib/client/api";
import type { Resolution } from "@/lib/ledger/states";
import { DEAD_LETTER_REASON_LABELS, RESOLUTION_OPTIONS, labelOf } from "@/components/ui/labels";
import { btnPrimary } from "@/components/ui/kit";
import { ReasonDialog } from "@/components/ui/ReasonDialog";
import { ResolutionSelect } from "./ResolutionSelect";
import { num, noun } from "@/lib/words";

export type ResolveTarget = { subscriptionId?: string; subscriptionName?: string | null; reason?: string | null };
type Target = ResolveTarget;

/**
 * The dialog. Its owner keeps it mounted (state above the table it was opened
 * from): the group it resolves leaves the table when the DLQ summary refreshes.
 */
export function ResolveGroupDialog({
  target,
  onClose,
  onDone,
  returnFocus,
}: {
  target: Target;
  onClose: () => void;
  onDone?: (n: number) => void;
  /** Where focus goes on closing if the resolve took the button that opened the dialog off the page. */
  returnFocus?: () => HTMLElement | null | undefined;
}) {
  const filter = { ...(target.subscriptionId ? { subscriptionId: target.subscriptionId } : {}), ...(target.reason ? { deadLetterReason: target.reason } : {}) };
  const [matched, setMatched] = useState<number | null>(null);
  const [countError, setCountError] = useState<string | null>(null);
  const [resolution, setResolution] = useState<Resolution>("discarded");
  const [done, setDone] = useState<number | null>(null);
  const key = JSON.stringify(filter);

  useEffect(() => {
    const ac = new AbortController();
    apiFetch<{ matched: number }>("/api/v1/dlq/resolve", { body: { filter: JSON.parse(key), resolution: "discarded", dryRun: true }, signal: ac.signal })
      .then((r) => setMatched(r.matched))
      .catch((err) => !ac.signal.aborted && setCountError(err instanceof ApiError ? err.message : "Could not count the dead letters; try again."));
    return () => ac.abort();
  }, [key]);

  const what = `${target.subscriptionName ?? target.subscriptionId ?? "every subscription"}${target.reason ? `, ${labelOf(DEAD_LETTER_REASON_LABELS, target.reason)}` : ""}`;
  const letters = (n: number | null) => noun(n ?? 0, "dead letter");
  return (
    <ReasonDialog
      modal
      title="Resolve dead letters"
      description={
        <>
          <p>{what}</p>
          <p className="mt-2 text-slate-800" aria-live="polite">
            {matched === null ? "Counting…" : `${num(matched)} ${noun(matched, "dead letter matches", "dead letters match")}.`} They leave the dead-letter queue with your
            decision on each one&apos;s timeline; a redrive can reopen any of them.
          </p>
          {countError && (
            <p role="alert" className="mt-2 text-red-700">
              {countError}
            </p>
          )}
        </>
      }
      placeholder="Westfield decommissioned its SIS, INC-2240"
      submitLabel={`Resolve ${matched === null ? "" : num(matched)} ${letters(matched)}`}
      busyLabel="Resolving…"
      canSubmit={Boolean(matched)}
      failMessage="The resolve failed; nothing was changed. Try again."
      onCancel={onClose}
      returnFocus={returnFocus}
      onSubmit={async (reason) => {
        const r = await apiFetch<{ resolved: number }>("/api/v1/dlq/resolve", { body: { filter, resolution, reason } });
        setDone(r.resolved);
        onDone?.(r.resolved);
      }}
      result={
        done === null ? undefined : (
          <div className="space-y-3">
            <p role="status" className="text-sm text-emerald-800">
              Resolved {num(done)} {letters(done)} as {labelOf(Object.fromEntries(RESOLUTION_OPTIONS.map((o) => [o.value, o.label])), resolution)}. The depth falls at the
              next sample (within 15 s).
            </p>
            <button type="button" className={btnPrimary} onClick={onClose}>
              Close
            </button>
          </div>
        )
      }
    >
      <ResolutionSelect value={resolution} onChange={setResolution} />
    </ReasonDialog>
  );
}

"use client";
import { useRef, useState } from "react";
import { useQuestionFocus } from "@/components/ui/useQuestionFocus";
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { apiFetch, ApiError } from "@/lib/client/api";
import type { RedriveBatchProgress } from "@/lib/redrive/redrive-batches";
import { STATUS_STYLE, btn, btnDanger, card, input, label, textLink } from "@/components/ui/kit";
import { Time, useFormatTime } from "@/components/ui/time";
import { KIND_VERB, KIND_VERB_WORDS, batchHeading, batchStatusText, describeBatch, statusStyleKey, stillOnTheirWay } from "@/components/redrive/batch-kind";
import { BusySubmit, LiveButton } from "@/components/ui/LiveButton";
import { actorInWords, num } from "@/lib/words";

function Stat({ name, value, hint, tone }: { name: string; value: number; hint?: string; tone?: string }) {
  return (
    <div className="min-w-0">
      <dt className="text-xs font-medium uppercase tracking-wide text-slate-600">{name}</dt>
      <dd className={`mt-0.5 text-2xl font-semibold tabular-nums ${tone ?? "text-slate-900"}`} data-testid={`stat-${name.toLowerCase().replace(/\s+/g, "-")}`}>
        {num(value)}
      </dd>
      {hint && <dd className="text-xs text-slate-600">{hint}</dd>}
    </div>
  );
}

/**
 * Stopping a running batch, after a question that says what stays as it is; an optional reason goes to the audit log.
 * The keyboard's focus follows: to the question when it opens, back to the button that opened it on Keep it running or
 * Escape, and it stays on the pressed button while the cancel is sent (busy, not disabled: a disabled button drops focus
 * to the top of the page).
 */
function CancelCard({ b, url, onCancelled, district }: { b: RedriveBatchProgress; url: string; onCancelled: () => Promise<unknown>; district: boolean }) {
  const [confirmCancel, setConfirmCancel] = useState(false);
  const [cancelReason, setCancelReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const { opener, question } = useQuestionFocus<HTMLFormElement>(confirmCancel);

  async function cancel() {
    setBusy(true);
    setError(null);
    try {
      await apiFetch(`${url}/cancel`, { body: cancelReason.trim() ? { reason: cancelReason.trim() } : {} });
      await onCancelled();
    } catch (err) {
      setError(err instanceof ApiError ? err.message : "The cancel failed; try again.");
    } finally {
      setBusy(false);
    }
  }

  const verb = (district ? KIND_VERB_WORDS : KIND_VERB)[b.kind] ?? "redriven";
  return (
    <div className={card}>
      {error && (
        <p role="alert" className="mb-2 text-sm text-red-800">
          {error}
        </p>
      )}
      {!confirmCancel ? (
        <LiveButton ref={opener} type="button" className={btnDanger} onClick={() => setConfirmCancel(true)}>
          Cancel this {b.kind}…
        </LiveButton>
      ) : (
        <form
          ref={question}
          tabIndex={-1}
          role="alertdialog"
          aria-labelledby="cancel-q"
          className="space-y-2 focus:outline-none focus-visible:ring-2 focus-visible:ring-blue-600"
          onSubmit={(e) => {
            e.preventDefault();
            if (!busy) void cancel();
          }}
          onKeyDown={(e) => {
            if (e.key === "Escape" && !busy) setConfirmCancel(false);
          }}
        >
          <p id="cancel-q" className="text-sm text-slate-900">
            Stop here? {num(b.remaining)} not yet reached {NOT_REACHED[b.kind] ?? NOT_REACHED.redrive}; the {num(b.redriven)} already {verb} go on.
          </p>
          <label className={`${label} max-w-md`}>
            Why (optional)
            <input className={input} value={cancelReason} onChange={(e) => setCancelReason(e.target.value)} placeholder="District asked us to stop" />
          </label>
          <div className="flex gap-2">
            <BusySubmit busy={busy} className={btnDanger}>
              {busy ? "Cancelling…" : `Yes, cancel the ${b.kind}`}
            </BusySubmit>
            <BusySubmit type="button" busy={busy} className={btn} onClick={() => setConfirmCancel(false)}>
              Keep it running
            </BusySubmit>
          </div>
        </form>
      )}
    </div>
  );
}

/**
 * `district`: a district's viewer, who reads the batch as deliveries sent again (the Sent again page), not as a redrive,
 * and its subscription by the name in `names` (id → name), not its id.
 */
export function RedriveBatchClient({
  initial,
  initialAt,
  canCancel,
  district,
  names = {},
}: {
  initial: RedriveBatchProgress;
  initialAt: number;
  canCancel: boolean;
  district: boolean;
  names?: Record<string, string>;
}) {
  const url = `/api/v1/redrives/${encodeURIComponent(initial.id)}`;
  const q = useQuery<RedriveBatchProgress>({
    queryKey: [url],
    queryFn: ({ signal }) => apiFetch<RedriveBatchProgress>(url, { signal }),
    initialData: initial,
    initialDataUpdatedAt: initialAt,
    // Every second while it runs; then every 5 s while the redriven ones finish their attempts.
    refetchInterval: (query) => (query.state.data?.status === "running" ? 1_000 : query.state.data && query.state.data.inProgress > 0 ? 5_000 : false),
    refetchIntervalInBackground: false,
  });
  const b = q.data ?? initial;
  const fmtTime = useFormatTime();
  // Once cancelled, the cancel card (and the button just pressed) is gone: focus goes to the status that says so.
  const status = useRef<HTMLSpanElement>(null);
  const handled = b.redriven + b.skipped;
  const verb = (district ? KIND_VERB_WORDS : KIND_VERB)[b.kind] ?? "redriven";
  const pct = b.matched ? Math.round((handled / b.matched) * 100) : 100;
  // The list's pill words ("Sending" and "Finished" for a district), with what is still on its way, as the list says them.
  const statusText = batchStatusText(b, { district });
  const sending = stillOnTheirWay(b);

  return (
    <section className="space-y-4">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div>
          <p className="text-sm">
            <Link href="/redrives" className={textLink}>
              {district ? "Sent again" : "Redrives"}
            </Link>{" "}
            / <span className="font-mono">{b.id}</span>
          </p>
          <h1 className="mt-1 text-2xl font-semibold">{batchHeading(b, { district })}</h1>
          <p className="mt-1 text-sm text-slate-700">
            “{b.reason}” by {actorInWords(b.actor)} at <Time iso={b.createdAt} relative={false} />.{" "}
            {district ? (
              <span data-testid="batch-selection">
                Sent: {describeBatch(b.kind, b.filter as Record<string, unknown>, fmtTime, { names })}, {num(b.ratePerSecond)} a second.
              </span>
            ) : (
              <>
                {b.kind === "redrive" ? "Filter" : "Selection"}: {describeBatch(b.kind, b.filter as Record<string, unknown>, fmtTime)}; {b.ratePerSecond}/s
                {b.latestStateWins ? "; latest state wins" : ""}.
              </>
            )}
          </p>
        </div>
        <span
          ref={status}
          tabIndex={-1}
          role="status"
          aria-live="polite"
          className={`rounded-full px-3 py-1 text-sm font-medium ring-1 ring-inset ${STATUS_STYLE[statusStyleKey(b)] ?? ""}`}
          data-testid="batch-status"
        >
          {statusText}
        </span>
      </div>

      <div className={card}>
        <div
          className="h-3 w-full overflow-hidden rounded-full bg-slate-200"
          role="progressbar"
          aria-label="Handled"
          aria-valuemin={0}
          aria-valuemax={100}
          aria-valuenow={pct}
        >
          <div
            className={`h-full ${b.status === "cancelled" ? "bg-amber-500" : b.status === "done" && !sending ? "bg-emerald-600" : "bg-blue-700"} transition-all`}
            style={{ width: `${pct}%` }}
          />
        </div>
        <p className="mt-1 text-xs text-slate-600">
          {pct}% handled
          {b.status === "running" && b.etaSeconds !== null ? `, the last queued in about ${b.etaSeconds} s at ${b.ratePerSecond}/s` : ""}
          {b.status === "cancelled"
            ? `; cancelled by ${b.cancelledBy ? actorInWords(b.cancelledBy) : "someone"} at ${fmtTime(b.finishedAt)}: ${num(b.remaining)} not reached ${NOT_REACHED[b.kind] ?? NOT_REACHED.redrive}`
            : ""}
          {b.status === "done" ? ` at ${fmtTime(b.finishedAt)}` : ""}
          {b.inProgress > 0 && b.status !== "running"
            ? `; ${num(b.inProgress)} still on their way (queued, being sent or retrying, as fast as the endpoint takes them)`
            : ""}
        </p>
        <dl className="mt-4 grid grid-cols-2 gap-4 sm:grid-cols-4 lg:grid-cols-7">
          <Stat name="Matched" value={b.matched} />
          <Stat
            name={verb[0].toUpperCase() + verb.slice(1)}
            value={b.redriven}
            hint={b.kind === "backfill" ? "deliveries created and queued" : "moved back to the queue"}
          />
          <Stat name="Skipped" value={b.skipped} hint={skippedHint(b)} />
          <Stat name="Remaining" value={b.remaining} />
          <Stat name="Delivered since" value={b.deliveredSince} tone="text-emerald-800" />
          <Stat name="In progress" value={b.inProgress} hint="queued, being sent or retrying" />
          <Stat
            name="Failed again"
            value={b.failedAgain}
            tone={b.failedAgain ? "text-red-800" : undefined}
            hint={b.kind === "redrive" ? "dead-lettered again" : "dead-lettered"}
          />
        </dl>
        {q.isError && <p className="mt-2 text-sm text-red-800">Progress could not be refreshed: {(q.error as Error).message}</p>}
      </div>

      {canCancel && b.status === "running" && (
        <CancelCard
          b={b}
          url={url}
          district={district}
          onCancelled={async () => {
            await q.refetch();
            status.current?.focus();
          }}
        />
      )}
      <p className="text-sm">
        <Link href={`/audit?targetId=${encodeURIComponent(b.id)}`} className="text-blue-700 hover:underline">
          This batch in the audit log
        </Link>
      </p>
    </section>
  );
}

/** What happens to the items a cancelled batch never reached. */
const NOT_REACHED: Record<string, string> = { redrive: "stay dead-lettered", recover: "are not sent again", backfill: "get no delivery" };

const SKIP_WORDS: Record<string, string> = {
  skipped_in_progress: "already on their way",
  skipped_state_changed: "changed state meanwhile",
  skipped_exists: "already had a delivery",
};

function skippedHint(b: RedriveBatchProgress): string | undefined {
  const parts: string[] = [];
  for (const [outcome, n] of Object.entries(b.skippedByOutcome ?? {})) if (SKIP_WORDS[outcome] && n) parts.push(`${n} ${SKIP_WORDS[outcome]}`);
  if (b.skippedBy.notDeadLettered) parts.push(`${b.skippedBy.notDeadLettered} delivered or due meanwhile`);
  if (b.skippedBy.superseded) parts.push(`${b.skippedBy.superseded} superseded`);
  if (b.skippedBy.subscriptionInactive) parts.push(`${b.skippedBy.subscriptionInactive} subscription paused/disabled`);
  return parts.length ? parts.join("; ") : undefined;
}

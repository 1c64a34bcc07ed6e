"use client";
import { useEffect, useMemo, useRef, useState } from "react";
import { useQuestionFocus } from "@/components/ui/useQuestionFocus";
import { useRouter } from "next/navigation";
import Link from "next/link";
import { apiFetch, ApiError } from "@/lib/client/api";
import type { RedrivePreview, RedriveBatchView } from "@/lib/redrive/redrive-batches";
import { DataTable, btn, btnPrimary, card, input } from "@/components/ui/kit";
import { Field, OptionSelect, REASON_MIN, ReasonInput, TimeField } from "@/components/ui/form";
import {
  DEAD_LETTER_REASON_LABELS,
  DEAD_LETTER_REASON_OPTIONS,
  DEAD_LETTER_REASON_TITLE,
  ERROR_CLASS_LABELS,
  ERROR_CLASS_OPTIONS,
  OPERATOR_REASON_TITLE,
  labelOf,
} from "@/components/ui/labels";
import { Time, toLocalInput, useFormatTime } from "@/components/ui/time";
import { BusySubmit, LiveFieldset } from "@/components/ui/LiveButton";
import { describeFilter } from "@/components/redrive/describe-filter";
import { PermanentWarning } from "@/components/redrive/PermanentWarning";
import { DlqSubscriptionInput, type DlqSubscriptionChoice } from "@/components/redrive/DlqSubscriptionInput";
import { HeldSubscriptionNote, inactiveSubscriptionOf, type InactiveSubscription } from "@/components/subscriptions/HeldSubscriptionNote";
import { num, count } from "@/lib/words";

export type InitialFilter = { subscriptionId: string; deadLetterReason: string; errorClass: string; statusCode: string; from: string; to: string };

function buildFilter(f: InitialFilter) {
  const out: Record<string, unknown> = {};
  if (f.subscriptionId.trim()) out.subscriptionId = f.subscriptionId.trim();
  if (f.deadLetterReason) out.deadLetterReason = f.deadLetterReason;
  if (f.errorClass.trim()) out.errorClass = f.errorClass.trim();
  if (f.statusCode.trim()) out.statusCode = Number(f.statusCode);
  if (f.from) out.deadLetteredFrom = new Date(f.from).toISOString();
  if (f.to) out.deadLetteredTo = new Date(f.to).toISOString();
  return out;
}

const deliveries = (n: number) => count(n, "delivery", "deliveries");
type Preview = RedrivePreview & { key: string };

/** 1. What to redrive: the filter, and whether a newer event for the same subject wins. */
function FilterForm({
  f,
  setF,
  subscriptions,
  subscriptionCount,
  latestStateWins,
  setLatestStateWins,
  previewing,
  onPreview,
}: {
  f: InitialFilter;
  setF: (u: (x: InitialFilter) => InitialFilter) => void;
  subscriptions: DlqSubscriptionChoice[];
  subscriptionCount: number;
  latestStateWins: boolean;
  setLatestStateWins: (v: boolean) => void;
  previewing: boolean;
  onPreview: () => void;
}) {
  const set = (k: keyof InitialFilter) => (e: React.ChangeEvent<HTMLInputElement | HTMLSelectElement>) => setF((x) => ({ ...x, [k]: e.target.value }));
  return (
    <form
      className={`${card} flex flex-col gap-3 self-start`}
      aria-label="Filter dead letters"
      onSubmit={(e) => {
        e.preventDefault();
        onPreview();
      }}
    >
      <h2 className="text-base font-semibold">1. What to redrive</h2>
      <LiveFieldset className="flex min-w-0 flex-col gap-3">
        <DlqSubscriptionInput value={f.subscriptionId} onChange={(v) => setF((x) => ({ ...x, subscriptionId: v }))} initial={subscriptions} total={subscriptionCount} />
        <Field label="Dead-letter reason">
          <OptionSelect any="Any reason" options={DEAD_LETTER_REASON_OPTIONS} value={f.deadLetterReason} onChange={set("deadLetterReason")} />
        </Field>
        <div className="grid grid-cols-2 gap-2">
          <Field label="Error class">
            <OptionSelect any="Any" options={ERROR_CLASS_OPTIONS} value={f.errorClass} onChange={set("errorClass")} />
          </Field>
          <Field label="Status code">
            <input className={input} value={f.statusCode} onChange={set("statusCode")} inputMode="numeric" pattern="[1-5][0-9][0-9]" placeholder="422" />
          </Field>
        </div>
        <TimeField label="Dead-lettered from" value={f.from} onChange={(v) => setF((x) => ({ ...x, from: v }))} />
        <TimeField label="Dead-lettered before" value={f.to} onChange={(v) => setF((x) => ({ ...x, to: v }))} />
        <label className="flex items-start gap-2 text-sm text-slate-800">
          <input type="checkbox" className="mt-1" checked={latestStateWins} onChange={(e) => setLatestStateWins(e.target.checked)} />
          <span>
            <span className="font-medium">Latest state wins</span>
            <span className="block text-slate-600">
              Skip an event when a newer one of the same type and subject (e.g. the same student and assignment) was already delivered, so a stale grade cannot overwrite
              a newer one.
            </span>
          </span>
        </label>
        <BusySubmit busy={previewing} className={btn}>
          {previewing ? "Previewing…" : "Preview"}
        </BusySubmit>
      </LiveFieldset>
    </form>
  );
}

function SampleTable({ preview, showSubscription }: { preview: Preview; showSubscription: boolean }) {
  return (
    <DataTable
      look="compact"
      caption={
        <caption className="mb-1 text-left text-xs font-medium uppercase tracking-wide text-slate-600">
          Sample: the first {preview.sample.length} of {num(preview.matched)}
        </caption>
      }
      columns={["Delivery", "Event", ...(showSubscription ? ["Subscription"] : []), DEAD_LETTER_REASON_TITLE, "Last answer", "Dead-lettered"]}
    >
      {preview.sample.map((s) => (
        <tr key={s.id} className="border-t border-slate-200 align-top">
          <td className="py-1 pr-3 font-mono text-xs">
            <Link href={`/deliveries/${s.id}`} className="text-blue-700 hover:underline">
              {s.id}
            </Link>
          </td>
          <td className="py-1 pr-3 font-mono text-xs">{s.eventId}</td>
          {showSubscription && <td className="py-1 pr-3">{s.subscriptionId}</td>}
          <td className="py-1 pr-3">{labelOf(DEAD_LETTER_REASON_LABELS, s.deadLetterReason)}</td>
          <td className="py-1 pr-3 whitespace-nowrap">
            <span title={s.lastErrorClass ?? undefined}>{s.lastStatusCode ? `HTTP ${s.lastStatusCode}` : labelOf(ERROR_CLASS_LABELS, s.lastErrorClass)}</span>
          </td>
          <td className="py-1 whitespace-nowrap">
            <Time iso={s.deadLetteredAt} relative={false} />
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

/** 2. Preview: the exact count, what is held back or would be skipped, and a sample. */
function PreviewSection({ preview, previewing, stale, filter }: { preview: Preview | null; previewing: boolean; stale: boolean; filter: Record<string, unknown> }) {
  const fmtTime = useFormatTime();
  return (
    <section className={card} aria-labelledby="preview-h" aria-busy={previewing}>
      <h2 id="preview-h" className="text-base font-semibold">
        2. Preview
      </h2>
      {!preview ? (
        <p className="mt-2 text-sm text-slate-600">{previewing ? "Counting…" : "Choose filters and press Preview."}</p>
      ) : (
        <div className={`mt-2 space-y-3 ${stale ? "opacity-50" : ""}`}>
          <p className="text-lg" data-testid="preview-count">
            <strong>{deliveries(preview.matched)}</strong> {preview.matched === 1 ? "matches" : "match"}: {describeFilter(filter, fmtTime)}.
          </p>
          {stale && <p className="text-sm font-medium text-amber-800">The filters changed: preview again before redriving.</p>}
          {preview.matched > 0 && (
            <p className="text-sm text-slate-600">
              Dead-lettered between {fmtTime(preview.oldestDeadLetteredAt)} and {fmtTime(preview.newestDeadLetteredAt)}. Oldest go first.
            </p>
          )}
          {preview.superseded !== null && preview.superseded > 0 && (
            <p className="text-sm text-slate-700">{deliveries(preview.superseded)} would be skipped now: a newer event for the same subject was already delivered.</p>
          )}
          {preview.held.map((h) => (
            <HeldSubscriptionNote key={h.subscriptionId} h={h} />
          ))}
          <PermanentWarning permanent={preview.permanent} matched={preview.matched} />
          {preview.sample.length > 0 && <SampleTable preview={preview} showSubscription={!filter.subscriptionId} />}
        </div>
      )}
    </section>
  );
}

/** 3. Why, and how fast: the reason and the rate, then a confirmation that names the count. */
function ConfirmSection({
  preview,
  stale,
  previewing,
  defaultRate,
  maxRate,
  confirming,
  setConfirming,
  onStart,
}: {
  preview: Preview | null;
  stale: boolean;
  previewing: boolean;
  defaultRate: number;
  maxRate: number;
  /** Asking "send N again?": closed by a new preview, and by a start that failed. */
  confirming: boolean;
  setConfirming: (v: boolean) => void;
  onStart: (reason: string, rate: number) => Promise<boolean>;
}) {
  const [reason, setReason] = useState("");
  const [rate, setRate] = useState(String(defaultRate));
  const [creating, setCreating] = useState(false);
  // The question takes the keyboard's focus when it opens (the button that opened it is gone), and Back or Escape
  // gives it back to that button.
  const { opener: startButton, question } = useQuestionFocus<HTMLDivElement>(confirming);
  const rateN = Number(rate);
  const rateOk = Number.isInteger(rateN) && rateN >= 1 && rateN <= maxRate;
  const reasonOk = reason.trim().length >= REASON_MIN;
  const matched = preview?.matched ?? 0;
  const seconds = rateOk && matched ? Math.ceil(matched / rateN) : 0;
  async function start() {
    setCreating(true);
    if (!(await onStart(reason.trim(), rateN))) {
      setCreating(false);
      setConfirming(false);
    }
  }
  return (
    <section className={card} aria-labelledby="confirm-h">
      <h2 id="confirm-h" className="text-base font-semibold">
        3. Why, and how fast
      </h2>
      <div className="mt-2 grid gap-3 sm:grid-cols-[1fr_10rem]">
        <Field label={`${OPERATOR_REASON_TITLE} (incident or ticket id)`}>
          <ReasonInput value={reason} onChange={setReason} placeholder="INC-2231: Lincoln fixed their importer" />
        </Field>
        <Field label="Rate (deliveries/s)">
          <input className={input} value={rate} onChange={(e) => setRate(e.target.value)} inputMode="numeric" aria-describedby="rate-help" />
        </Field>
      </div>
      <p id="rate-help" className="mt-1 text-xs text-slate-600">
        Default {defaultRate}/s is gentle on a district that has just recovered. Up to {num(maxRate)}/s.
        {!rateOk && <span className="font-medium text-red-700"> Enter a whole number from 1 to {maxRate}.</span>}
      </p>
      {!confirming ? (
        <button
          ref={startButton}
          type="button"
          className={`${btnPrimary} mt-3`}
          disabled={!preview || stale || matched === 0 || !reasonOk || !rateOk || previewing}
          onClick={() => setConfirming(true)}
        >
          Redrive {preview && !stale ? deliveries(matched) : "…"}
        </button>
      ) : (
        <div
          ref={question}
          tabIndex={-1}
          role="alertdialog"
          aria-labelledby="confirm-q"
          className="mt-3 rounded-md border border-blue-300 bg-blue-50 p-3 focus:outline-none focus-visible:ring-2 focus-visible:ring-blue-600"
          onKeyDown={(e) => {
            if (e.key === "Escape" && !creating) setConfirming(false);
          }}
        >
          <p id="confirm-q" className="text-sm text-slate-900">
            Send <strong>{deliveries(matched)}</strong> again at {rateN}/s (all queued in about {seconds < 90 ? `${seconds} s` : `${Math.ceil(seconds / 60)} min`}; each
            is sent as fast as its endpoint takes it), reason “{reason.trim()}
            ”? Each keeps its webhook-id; anything delivered meanwhile is skipped.
          </p>
          {preview && <PermanentWarning permanent={preview.permanent} matched={matched} short />}
          <div className="mt-2 flex gap-2">
            <button type="button" className={btnPrimary} onClick={start} disabled={creating}>
              {creating ? "Starting…" : `Yes, redrive ${deliveries(matched)}`}
            </button>
            <button type="button" className={btn} onClick={() => setConfirming(false)} disabled={creating}>
              Back
            </button>
          </div>
        </div>
      )}
      {preview && matched === 0 && !stale && <p className="mt-2 text-sm text-slate-600">Nothing matches, so there is nothing to redrive.</p>}
    </section>
  );
}

export function BulkRedriveClient({
  initial,
  subscriptions,
  subscriptionCount,
  defaultRate,
  maxRate,
}: {
  initial: InitialFilter;
  /** The first suggestions for the subscription field: the deepest, and the one a link named. */
  subscriptions: DlqSubscriptionChoice[];
  /** How many subscriptions have dead letters. */
  subscriptionCount: number;
  defaultRate: number;
  maxRate: number;
}) {
  const router = useRouter();
  const [f, setF] = useState<InitialFilter>({ ...initial, from: toLocalInput(initial.from), to: toLocalInput(initial.to) });
  const [latestStateWins, setLatestStateWins] = useState(false);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [previewing, setPreviewing] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // The filter's subscription is paused or disabled (409): said in words with the button that fixes it.
  const [inactive, setInactive] = useState<InactiveSubscription | null>(null);
  const [confirming, setConfirming] = useState(false);
  // What Resume deliveries on the note above did: the note goes as the preview runs again, and the keyboard's focus,
  // which was on its button, goes to this line (once it holds the words, so they are what is read).
  const [resumedNote, setResumedNote] = useState({ text: "", n: 0 });
  const resumedLine = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (resumedNote.n > 0) resumedLine.current?.focus();
  }, [resumedNote]);

  const filter = useMemo(() => buildFilter(f), [f]);
  const key = JSON.stringify({ filter, latestStateWins });
  const stale = preview !== null && preview.key !== key;

  // Only the newest preview's answer counts: the one the page starts on opening can still be on its way when Preview
  // is pressed, and its end must neither replace the newer answer nor re-enable the buttons while that one runs.
  const previews = useRef(0);
  async function runPreview(resumed = false) {
    const mine = ++previews.current;
    setPreviewing(true);
    setError(null);
    setInactive(null);
    if (!resumed) setResumedNote((r) => ({ ...r, text: "" }));
    setConfirming(false);
    try {
      const p = await apiFetch<RedrivePreview>("/api/v1/redrives", { body: { filter, latestStateWins, dryRun: true } });
      if (mine === previews.current) setPreview({ ...p, key });
    } catch (err) {
      if (mine !== previews.current) return;
      setPreview(null);
      const held = inactiveSubscriptionOf(err);
      if (held) setInactive(held);
      else setError(err instanceof ApiError ? err.message : "The preview failed; try again.");
    } finally {
      if (mine === previews.current) setPreviewing(false);
    }
  }

  // Preview what the DLQ page linked here with, at once.
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      void runPreview();
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  /** Starts the batch and opens its page; false (with the message shown) if it could not be started. */
  async function create(reason: string, ratePerSecond: number): Promise<boolean> {
    setError(null);
    try {
      const b = await apiFetch<RedriveBatchView>("/api/v1/redrives", { body: { filter, reason, ratePerSecond, latestStateWins } });
      router.push(`/redrives/${b.id}`);
      return true;
    } catch (err) {
      setError(err instanceof ApiError ? err.message : "The redrive could not be started; try again.");
      return false;
    }
  }

  return (
    <div className="grid gap-4 lg:grid-cols-[22rem_1fr]">
      <FilterForm
        f={f}
        setF={setF}
        subscriptions={subscriptions}
        subscriptionCount={subscriptionCount}
        latestStateWins={latestStateWins}
        setLatestStateWins={setLatestStateWins}
        previewing={previewing}
        onPreview={() => void runPreview()}
      />
      <div className="flex min-w-0 flex-col gap-4">
        {error && (
          <div role="alert" className="rounded-lg border border-red-300 bg-red-50 px-4 py-3 text-sm text-red-900">
            {error}
          </div>
        )}
        <p
          ref={resumedLine}
          tabIndex={-1}
          role="status"
          className="rounded-md text-sm text-emerald-800 empty:sr-only focus:outline-none focus-visible:ring-2 focus-visible:ring-blue-600"
          data-testid="resumed-status"
        >
          {resumedNote.text}
        </p>
        {inactive && (
          <HeldSubscriptionNote
            key={`${inactive.subscriptionId}:${inactive.state}`}
            h={inactive}
            onResumed={() => {
              setResumedNote((r) => ({
                text: `${inactive.subscriptionId} is resumed: its deliveries go out again, and the preview below counts its dead letters.`,
                n: r.n + 1,
              }));
              void runPreview(true);
            }}
          />
        )}
        <PreviewSection preview={preview} previewing={previewing} stale={stale} filter={filter} />
        <ConfirmSection
          preview={preview}
          stale={stale}
          previewing={previewing}
          defaultRate={defaultRate}
          maxRate={maxRate}
          confirming={confirming}
          setConfirming={setConfirming}
          onStart={create}
        />
      </div>
    </div>
  );
}

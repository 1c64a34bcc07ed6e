// A batch's kind in words, for the Redrives list, a batch's page and the CLI's
// vocabulary: what the batch does to each item, and its window or filter.
import { describeFilter } from "./describe-filter";
import { noun, num } from "@/lib/words";
import { isFinishedBatch, type BatchStatus } from "@/lib/ledger/states";
// Its type only: the module (zod schemas) stays out of the browser bundle.
import type { BatchKind } from "@/lib/redrive/redrive-input";

/** Batches a page of the Redrives page lists; Next and Previous page through the rest. */
export const BATCHES_SHOWN = 100;

export const KIND_LABEL: Record<string, string> = { redrive: "Redrive", recover: "Recover", backfill: "Backfill" } satisfies Record<BatchKind, string>;
/** What a moved item is called in each kind. */
export const KIND_VERB: Record<string, string> = { redrive: "redriven", recover: "resent", backfill: "created" } satisfies Record<BatchKind, string>;
/** The kinds in a district's words, which has never heard of a redrive, a recover or a backfill: what was sent again. */
export const KIND_WORDS: Record<string, string> = { redrive: "Dead letters", recover: "A period's deliveries", backfill: "Earlier events" } satisfies Record<
  BatchKind,
  string
>;
/** What a moved item is called in each kind, in a district's words. */
export const KIND_VERB_WORDS: Record<string, string> = { redrive: "sent again", recover: "sent again", backfill: "created" } satisfies Record<BatchKind, string>;
/** A batch's status as the batch's page says it (its API's running, done or cancelled); a status without words is a type error. */
const STATUS_LABEL: Record<string, string> = { running: "Running", done: "Done", cancelled: "Cancelled" } satisfies Record<BatchStatus, string>;
/** The same in a district's words: what is happening to what was sent for it. */
const STATUS_WORDS: Record<string, string> = { running: "Sending", done: "Finished", cancelled: "Cancelled" } satisfies Record<BatchStatus, string>;

/** A batch's status in the viewer's words; a status this list does not know yet shows as it is stored rather than not at all. */
export function statusInWords(status: string, opts: { district?: boolean } = {}): string {
  return (opts.district ? STATUS_WORDS : STATUS_LABEL)[status] ?? status;
}

/**
 * A done or cancelled batch whose deliveries are still on their way: the pacer is done once every item is back in the
 * queue, which at a rate above what the endpoint takes (its maxConcurrency, its latency) is well before the last one is
 * sent; a cancel stops it moving more, and those it already moved still go out. Its page and the list say so. `inProgress`
 * null: not counted (the list's running batches).
 */
export function stillOnTheirWay(b: { status: string; inProgress: number | null }): boolean {
  return isFinishedBatch(b.status) && (b.inProgress ?? 0) > 0;
}

/**
 * The status whose style a batch's pill (and its page's bar) takes: a done batch still on its way looks running; a
 * cancelled one keeps its own, as nothing more of it is being moved.
 */
export function statusStyleKey(b: { status: string; inProgress: number | null }): string {
  return stillOnTheirWay(b) && b.status === "done" ? "running" : b.status;
}

/**
 * A batch's status on its own page and in the list, with what it is doing. The pacer is done once every item is back in the queue,
 * which at a rate above what the endpoint takes (its maxConcurrency, its latency) is well before the last one is
 * sent: until then "Done" alone, or a district's "Finished", would say the deliveries had gone out. A cancelled batch's
 * already moved deliveries still go out too, and "Cancelled" alone would say nothing is being sent.
 */
export function batchStatusText(
  b: { status: string; matched: number; redriven: number; skipped: number; inProgress: number | null },
  opts: { district?: boolean } = {},
): string {
  if (b.status === "running") return `${statusInWords("running", opts)}: ${num(b.redriven + b.skipped)} of ${num(b.matched)} handled`;
  // A cancelled batch still says Cancelled (for a district too): "Sending" would say it goes on.
  const word = b.status === "done" && opts.district ? "running" : b.status;
  if (stillOnTheirWay(b)) return `${statusInWords(word, opts)}: ${num(b.inProgress!)} still on their way`;
  return statusInWords(b.status, opts);
}
export const KIND_STYLE: Record<string, string> = {
  redrive: "bg-slate-100 text-slate-900 ring-slate-300",
  recover: "bg-violet-100 text-violet-900 ring-violet-300",
  backfill: "bg-teal-100 text-teal-900 ring-teal-300",
};

/**
 * A batch's page heading (and its title): "Redrive of 1,204 deliveries", "Backfill of 12 events"; for a district,
 * what was sent: "1,204 dead letters sent again", "12 earlier events sent".
 */
export function batchHeading(b: { kind: string; matched: number }, opts: { district?: boolean } = {}): string {
  if (opts.district) {
    if (b.kind === "backfill") return `${num(b.matched)} earlier ${noun(b.matched, "event")} sent`;
    return `${num(b.matched)} ${b.kind === "recover" ? noun(b.matched, "delivery", "deliveries") : noun(b.matched, "dead letter")} sent again`;
  }
  return `${KIND_LABEL[b.kind] ?? "Redrive"} of ${num(b.matched)} ${b.kind === "backfill" ? noun(b.matched, "event") : noun(b.matched, "delivery", "deliveries")}`;
}

/**
 * The batch's selection in words: a redrive's dead-letter filter, or a recover's or backfill's subscription and window.
 * `district`: its subscription by name (`names`, id → name), as a district calls it.
 */
export function describeBatch(kind: string, f: Record<string, unknown>, fmt: (iso: string) => string, district?: { names: Record<string, string> }): string {
  if (kind === "redrive") return describeFilter(f, fmt, district);
  const what = kind === "recover" ? "deliveries created" : "events received";
  const states = Array.isArray(f.states) ? ` (${(f.states as string[]).map((s) => s.replace("_", " ")).join(", ")})` : "";
  const sub = district?.names[String(f.subscriptionId)] ?? `subscription ${f.subscriptionId}`;
  return `${sub}, ${what} ${fmt(String(f.since))} to ${fmt(String(f.until))}${states}`;
}

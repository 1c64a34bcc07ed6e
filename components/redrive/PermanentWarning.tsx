"use client";
// The bulk redrive's warning before confirming: how many of
// the selected dead letters the receiver rejected as permanent, in its own
// words, and what to do instead of sending the same bytes again.
import Link from "next/link";
import type { PermanentSummary } from "@/lib/redrive/redrive-batches";
import { quoteAnswer } from "@/lib/dashboard/describe";
import { num, count } from "@/lib/words";

const deadLetters = (n: number) => count(n, "dead letter");

/** `short`: one sentence for the confirmation; otherwise who answered what and the two ways out. Nothing when none is permanent. */
export function PermanentWarning({ permanent, matched, short = false }: { permanent: PermanentSummary; matched: number; short?: boolean }) {
  if (permanent.count === 0) return null;
  const all = permanent.count === matched;
  const one = permanent.count === 1;
  if (short)
    return (
      <p className="mt-1 text-sm font-medium text-red-900" data-testid="permanent-confirm">
        {all ? (one ? "It was" : "All of them were") : `${deadLetters(permanent.count)} of them ${one ? "was" : "were"}`} rejected as permanent and will most likely be
        rejected again.
      </p>
    );
  const who = all
    ? one
      ? "This dead letter was"
      : `All ${deadLetters(permanent.count)} were`
    : `${deadLetters(permanent.count)} of ${num(matched)} ${one ? "was" : "were"}`;
  // One district's rejections: the DLQ page opens on that subscription's, ready to resolve.
  const subs = new Set(permanent.answers.map((a) => a.subscriptionId));
  const resolveHref = `/dlq?reason=permanent${subs.size === 1 ? `&subscriptionId=${encodeURIComponent([...subs][0])}` : ""}`;
  return (
    <div role="note" className="rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-950" data-testid="permanent-warning">
      <p className="font-semibold">
        {who} rejected as permanent: the district&apos;s system refused the data itself, so sending the same data again gets the same answer.
      </p>
      <ul className="mt-1 list-disc space-y-0.5 pl-5">
        {permanent.answers.map((a) => (
          <li key={`${a.subscriptionId}:${a.statusCode}`} className="break-words">
            {a.subscriptionName} answered {a.statusCode ? `HTTP ${a.statusCode}` : "with an error"}
            {quoteAnswer(a.excerpt) ? ` ${quoteAnswer(a.excerpt)}` : ""} ({deadLetters(a.count)})
          </li>
        ))}
      </ul>
      <p className="mt-1">
        Instead: fix the data at the source and publish it again, then{" "}
        <Link href={resolveHref} className="font-medium underline">
          resolve these
        </Link>{" "}
        as fixed at source (a single delivery&apos;s resolve can name the corrected event); or, if the district has changed what it accepts, redrive them.
      </p>
    </div>
  );
}

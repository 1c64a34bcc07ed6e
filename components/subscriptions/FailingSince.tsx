"use client";
// "Failing since 07:44:31", in red, where an endpoint's newest attempts all
// failed, three in a row or every one for five minutes
// (lib/dashboard/subscriptions.ts, failingOf): on a district's card, the subscriptions list and the
// subscription's page, with the last answer's time and words, so an outage
// reads as one now rather than as a 24 h rate that is still high.
import type { SubscriptionHealth } from "@/lib/dashboard/subscriptions";
import { answerWords } from "@/components/ui/labels";
import { formatTime, useTimeZone } from "@/components/ui/time";
import { num } from "@/lib/words";
import { useViewerTenant } from "@/components/dashboard/ViewerTenant";

type Failing = Pick<SubscriptionHealth, "failing" | "lastError"> & Partial<Pick<SubscriptionHealth, "answeredCheckAt">>;

/** The last failed answer: "HTTP 503 “Service Unavailable” at 07:52:10 UTC"; `clamp` keeps a table cell to two lines. */
export function LastAnswer({ s, clamp = false }: { s: Failing; clamp?: boolean }) {
  const tz = useTimeZone();
  const district = useViewerTenant() !== null;
  const last = s.lastError;
  if (!last) return <span className="text-slate-500">none recently</span>;
  const said = last.excerpt ?? last.message;
  const words = answerWords(last.statusCode, last.errorClass, said, district);
  // What was stored, for whoever debugs the endpoint, where a district reads it in words.
  const raw = words !== answerWords(last.statusCode, last.errorClass, said) ? (said ?? undefined) : undefined;
  const when = (
    <time dateTime={last.at} className="whitespace-nowrap">
      {formatTime(last.at, tz)}
    </time>
  );
  // In a table cell the words are clamped (whole in the tooltip) and the time stays visible under them.
  return clamp ? (
    <span className="block text-slate-800" data-testid="last-answer">
      <span className="line-clamp-2 break-words" title={raw ? `${words} (${raw})` : words}>
        {words}
      </span>
      <span className="block text-xs text-slate-600">{when}</span>
    </span>
  ) : (
    <span className="break-words text-slate-800" data-testid="last-answer">
      {/* The answer whole, as stored (up to its 4 KB excerpt); a long one scrolls inside its own box, as in the answer
          groups, so what an endpoint answers cannot fill its card, the district's page or the subscription's header. */}
      <span className="inline-block max-h-24 max-w-full overflow-y-auto break-words align-top" data-testid="last-answer-words" title={raw}>
        {words}
      </span>{" "}
      <span className="text-slate-600">at</span> {when}
    </span>
  );
}

/** Nothing unless failing now; then the red line, and (unless `brief`) the last answer under it. */
export function FailingSince({ s, brief = false }: { s: Failing; brief?: boolean }) {
  const tz = useTimeZone();
  if (!s.failing) return null;
  const { since, attempts } = s.failing;
  return (
    <div data-testid="failing-since" className="rounded-md bg-red-50 px-2 py-1.5 text-sm text-red-900 ring-1 ring-red-200">
      <strong className="font-semibold text-red-800">
        Failing since{" "}
        <time dateTime={since} className="whitespace-nowrap">
          {formatTime(since, tz)}
        </time>
      </strong>
      <span className={brief ? "block text-xs" : undefined}>
        {brief ? "" : ": "}
        {attempts === 1 ? "its last attempt failed" : `its last ${num(attempts)} attempts all failed`}, none delivered since.
      </span>
      {/* True of the deliveries, but it would read as if the endpoint were still down: it has since answered a probe. */}
      {!brief && s.answeredCheckAt && (
        <span className="mt-0.5 block text-slate-800" data-testid="answered-check">
          It answered a check at{" "}
          <time dateTime={s.answeredCheckAt} className="whitespace-nowrap">
            {formatTime(s.answeredCheckAt, tz)}
          </time>
          ; the next delivery will show whether it is back.
        </span>
      )}
      {!brief && (
        <span className="mt-0.5 block">
          Last answer: <LastAnswer s={s} />
        </span>
      )}
    </div>
  );
}

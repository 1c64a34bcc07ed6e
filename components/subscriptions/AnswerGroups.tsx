"use client";
// What a subscription's endpoint has been answering: its recent failed
// answers grouped ("12 × HTTP 422 “missing field term_id”"), each with a button that
// filters the deliveries to it and, for engineers, a link that opens the bulk
// redrive pre-filtered.
import Link from "next/link";
import type { AnswerGroup } from "@/lib/dashboard/subscriptions";
import { formatClock, formatTime, useNow, useTimeZone } from "@/components/ui/time";
import { Card, EmptyState, btn } from "@/components/ui/kit";
import { answerWords } from "@/components/ui/labels";
import { NO_FILTERS, type DeliveryFilterValues as Filters } from "@/components/dashboard/DeliveryFilters";
import { LiveButton } from "@/components/ui/LiveButton";
import { num } from "@/lib/words";
import { useViewerTenant } from "@/components/dashboard/ViewerTenant";

export type Answers = { groups: AnswerGroup[]; examined: number };

function sinceText(iso: string, tz: string, now: number): string {
  const d = new Date(iso);
  const days = (now - d.getTime()) / 86400_000;
  if (days < 1) return `since ${formatClock(iso, tz)}`;
  if (days < 7) return `since ${new Intl.DateTimeFormat("en-GB", { weekday: "long", timeZone: tz }).format(d)}`;
  return `since ${new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short", timeZone: tz }).format(d)}`;
}

function redriveHref(subscriptionId: string, g: AnswerGroup): string {
  const qs = new URLSearchParams({
    subscriptionId,
    ...(g.statusCode ? { statusCode: String(g.statusCode) } : {}),
    ...(g.errorClass ? { errorClass: g.errorClass } : {}),
  });
  return `/dlq/redrive?${qs}`;
}

type RowProps = { g: AnswerGroup; subscriptionId: string; canRedrive: boolean; onShow: (f: Filters) => void; tz: string; now: number; district: boolean };

function AnswerRow({ g, subscriptionId, canRedrive, onShow, tz, now, district }: RowProps) {
  const words = answerWords(g.statusCode, g.errorClass, g.signature, district);
  // A district reads a network failure in words; the answer as grouped stays in the title for whoever debugs the endpoint.
  const raw = words !== answerWords(g.statusCode, g.errorClass, g.signature) ? g.signature : undefined;
  return (
    <li className="flex flex-col gap-1 rounded-md border border-slate-200 p-2 sm:flex-row sm:items-center sm:justify-between">
      <div className="min-w-0 text-sm">
        <span className="font-semibold text-slate-900">{num(g.count)} ×</span>{" "}
        {/* The answer whole, as stored (up to its excerpt); a long one scrolls inside its own box. */}
        <span className="inline-block max-h-24 max-w-full overflow-y-auto break-words align-top text-slate-800" data-testid="answer-words" title={raw}>
          {words}
        </span>{" "}
        <span className="text-slate-600" title={`first ${g.firstAt}, last ${g.lastAt}`}>
          {sinceText(g.firstAt, tz, now)}, last {formatTime(g.lastAt, tz)}
        </span>
      </div>
      <div className="flex shrink-0 gap-2">
        <LiveButton
          type="button"
          className={`${btn} px-2 py-1 text-xs`}
          onClick={() => onShow({ ...NO_FILTERS, statusCode: g.statusCode ? String(g.statusCode) : "", errorClass: g.statusCode ? "" : (g.errorClass ?? "") })}
        >
          Show deliveries
        </LiveButton>
        {/* Only answers that dead-lettered something: a 429 that was retried and got through leaves nothing to redrive. */}
        {canRedrive && g.deadLettered > 0 && (
          <Link className={`${btn} px-2 py-1 text-xs`} href={redriveHref(subscriptionId, g)}>
            Redrive these…
          </Link>
        )}
      </div>
    </li>
  );
}

export function AnswerGroups({
  answers,
  subscriptionId,
  canRedrive,
  onShow,
}: {
  answers: Answers | undefined;
  subscriptionId: string;
  canRedrive: boolean;
  /** Filters the deliveries list to one group's answers. */
  onShow: (f: Filters) => void;
}) {
  const tz = useTimeZone();
  const now = useNow(15_000);
  const district = useViewerTenant() !== null;
  return (
    <Card title="What the endpoint has been answering" id="answers">
      {answers && answers.groups.length === 0 ? (
        <EmptyState title="No failed answers recently">
          {answers.examined ? `All of the last ${num(answers.examined)} attempts succeeded.` : "No attempts yet."}
        </EmptyState>
      ) : (
        <ul className="space-y-2" data-testid="answer-groups">
          {answers?.groups.map((g, i) => (
            <AnswerRow key={i} g={g} subscriptionId={subscriptionId} canRedrive={canRedrive} onShow={onShow} tz={tz} now={now} district={district} />
          ))}
        </ul>
      )}
      {answers && answers.examined > 0 && (
        <p className="mt-2 text-xs text-slate-600">
          From the last {num(answers.examined)} attempts; similar answers are grouped (ids folded to #; dates, durations and short numbers kept).
        </p>
      )}
    </Card>
  );
}

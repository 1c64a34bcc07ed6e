"use client";
// The bulk redrive's subscription, chosen by typing: a text field whose suggestions are the subscriptions with dead
// letters whose name, id or tenant contains what is typed, the deepest first, asked of GET /api/v1/dlq?q= (the Dead
// letters page's search). A select holding one option per subscription with dead letters was unusable when an outage
// touched thousands of districts; here any id can be typed, and the preview refuses an unknown one with a message.
import { useId } from "react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { apiFetch } from "@/lib/client/api";
import type { DlqSummary } from "@/lib/dashboard/dead-letters";
import { input } from "@/components/ui/kit";
import { useTypedQuery } from "@/components/ui/useTypedQuery";
import { count, num } from "@/lib/words";

/** A suggestion: the subscription and how many dead letters it has. */
export type DlqSubscriptionChoice = { id: string; name: string | null; deadLetters: number };

/** How many suggestions one answer holds: enough to pick from, few enough to read. */
export const SUBSCRIPTION_SUGGESTIONS = 20;

/** Field ids a subscription id can hold (lib/redrive/redrive-input.ts: ZRedriveFilter.subscriptionId). */
const MAX_ID = 64;

export function DlqSubscriptionInput({
  value,
  onChange,
  initial,
  total,
}: {
  value: string;
  onChange: (v: string) => void;
  /** The server's first suggestions (the deepest, and the subscription a link named): shown before anything is typed. */
  initial: DlqSubscriptionChoice[];
  /** How many subscriptions have dead letters. */
  total: number;
}) {
  const fieldId = useId();
  const listId = useId();
  const helpId = useId();
  const q = useTypedQuery(value);
  const answer = useQuery<{ items: DlqSubscriptionChoice[]; matching: number }>({
    queryKey: ["/api/v1/dlq", "redrive-suggest", q],
    queryFn: ({ signal }) =>
      apiFetch<DlqSummary>(`/api/v1/dlq?${new URLSearchParams({ limit: String(SUBSCRIPTION_SUGGESTIONS), ...(q ? { q } : {}) })}`, { signal }).then((d) => ({
        items: d.bySubscription.map((s) => ({ id: s.subscriptionId, name: s.subscriptionName, deadLetters: s.depth })),
        matching: d.matchingSubscriptionCount,
      })),
    retry: false,
    staleTime: 30_000,
    placeholderData: keepPreviousData,
  });
  const items = answer.data?.items ?? initial;
  const chosen = items.find((s) => s.id === value.trim()) ?? initial.find((s) => s.id === value.trim());
  const text = value.trim();
  let help: string;
  if (!text) help = `Empty: every active subscription's dead letters. Type part of a name, id or district to find one of the ${num(total)} with dead letters.`;
  else if (chosen) help = `${chosen.name ?? chosen.id} · ${count(chosen.deadLetters, "dead letter")}`;
  else if (answer.data && answer.data.matching === 0 && q === text)
    help = `No subscription with dead letters matches “${text}”; type another part of its name, id or district.`;
  else help = "Pick a suggestion, or type a whole subscription id.";
  // The help sits outside the label, so the field's name stays "Subscription" and the help is its description.
  return (
    <div className="flex min-w-0 flex-col gap-1">
      <label htmlFor={fieldId} className="text-sm font-medium text-slate-800">
        Subscription
      </label>
      <input
        id={fieldId}
        className={`${input} max-w-full`}
        list={listId}
        value={value}
        maxLength={MAX_ID}
        autoComplete="off"
        spellCheck={false}
        placeholder="All active subscriptions"
        aria-describedby={helpId}
        onChange={(e) => onChange(e.target.value)}
      />
      <datalist id={listId} data-testid="subscription-suggestions">
        {items.map((s) => (
          <option key={s.id} value={s.id} label={`${s.name ?? s.id} · ${count(s.deadLetters, "dead letter")}`} />
        ))}
      </datalist>
      <p id={helpId} className="text-xs text-slate-600" data-testid="subscription-help">
        {help}
      </p>
    </div>
  );
}

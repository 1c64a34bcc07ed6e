// The alert conditions, firing ones first. Plain markup: rendered on the server.
import Link from "next/link";
import type { AlertCondition } from "@/lib/metrics/alerts";
import { count, num } from "@/lib/words";
import { textLink } from "@/components/ui/kit";

/** Where the subscriptions a condition does not list can be found (Dead letters lists and searches every one with dead letters). */
const MORE: Partial<Record<AlertCondition["id"], { href: string; page: string }>> = {
  dlq_oldest_age: { href: "/dlq", page: "Dead letters" },
  dlq_growing: { href: "/dlq", page: "Dead letters" },
};

const SEVERITY: Record<AlertCondition["severity"], string> = {
  page: "bg-red-100 text-red-900 ring-red-300",
  warning: "bg-amber-100 text-amber-900 ring-amber-300",
};

export function AlertList({ conditions }: { conditions: AlertCondition[] }) {
  const sorted = [...conditions].sort((a, b) => Number(b.holds) - Number(a.holds));
  return (
    <ul className="space-y-3" aria-label="Alert conditions">
      {sorted.map((c) => (
        <li
          key={c.id}
          data-alert={c.id}
          data-holds={c.holds ? "true" : "false"}
          className={`rounded-lg border bg-white p-4 shadow-sm ${c.holds ? "border-red-300" : "border-slate-200"}`}
        >
          <div className="flex flex-wrap items-center gap-2">
            <span
              className={`inline-flex items-center rounded-full px-2 py-0.5 text-xs font-semibold ring-1 ring-inset ${
                c.holds ? SEVERITY[c.severity] : "bg-emerald-100 text-emerald-900 ring-emerald-300"
              }`}
            >
              {c.holds ? (c.severity === "page" ? "Firing · page" : "Firing · warning") : "OK"}
            </span>
            <h2 className="text-base font-semibold text-slate-900">{c.title}</h2>
            <code className="text-xs text-slate-600">{c.rule}</code>
          </div>
          <p className="mt-1 text-sm text-slate-700">
            Fires when {c.threshold}. <span className="text-slate-600">Measured here from {c.measuredAs}.</span>
          </p>
          {c.offenders.length > 0 && (
            <ul className="mt-2 divide-y divide-slate-100 rounded border border-slate-100 text-sm">
              {c.offenders.map((o, i) => (
                <li key={o.subscriptionId ?? i} className="flex flex-wrap justify-between gap-2 px-3 py-1.5">
                  {o.subscriptionId ? (
                    <Link href={`/subscriptions/${encodeURIComponent(o.subscriptionId)}`} className="font-medium text-blue-700 wrap-anywhere hover:underline">
                      {o.subscriptionName ?? o.subscriptionId}
                    </Link>
                  ) : (
                    <span className="font-medium text-slate-800">All workers</span>
                  )}
                  <span className={c.holds ? "text-red-900" : "text-slate-700"}>{o.value}</span>
                </li>
              ))}
            </ul>
          )}
          {c.offenderCount > c.offenders.length && (
            <p className="mt-1 text-sm text-slate-700" data-testid="alert-more">
              Showing the worst {num(c.offenders.length)} of {count(c.offenderCount, "subscription")}
              {MORE[c.id] && (
                <>
                  ; find the others on{" "}
                  <Link href={MORE[c.id]!.href} className={textLink}>
                    {MORE[c.id]!.page}
                  </Link>
                </>
              )}
              .
            </p>
          )}
        </li>
      ))}
    </ul>
  );
}

// The Audit page: every operator action (redrive, cancel, pause, resume,
// subscription changes, secret rotation…) from audit_entries, written in the
// same transaction as the change it records. A plain GET form: filters live
// in the URL, so a filtered view can be pasted into a ticket.
import Link from "next/link";
import { requireViewer } from "@/lib/auth/session";
import { getPrisma } from "@/lib/db/prisma";
import { card, btn, btnPrimary, input, label, fmtTime } from "@/components/redrive/ui";
import { ZAuditQuery, findAuditEntries } from "./find-audit-entries";

export const dynamic = "force-dynamic";

const TARGET_LINK: Record<string, (id: string) => string> = {
  delivery: (id) => `/deliveries/${encodeURIComponent(id)}`,
  subscription: (id) => `/subscriptions/${encodeURIComponent(id)}`,
  redrive_batch: (id) => `/redrives/${encodeURIComponent(id)}`,
};

function summarize(details: unknown): string {
  if (!details || typeof details !== "object") return "";
  const d = details as Record<string, unknown>;
  const parts: string[] = [];
  if (typeof d.count === "number") parts.push(`${d.count.toLocaleString("en-US")} ${d.count === 1 ? "delivery" : "deliveries"}`);
  if (d.filter && typeof d.filter === "object") {
    const f = Object.entries(d.filter as Record<string, unknown>).map(([k, v]) => `${k}=${v}`);
    parts.push(f.length ? `filter ${f.join(", ")}` : "no filter");
  }
  if (typeof d.ratePerSecond === "number") parts.push(`${d.ratePerSecond}/s`);
  if (typeof d.from === "string" && typeof d.to === "string") parts.push(`${d.from} → ${d.to}`);
  if (typeof d.remaining === "number") parts.push(`${d.redriven} redriven, ${d.remaining} not reached`);
  if (Array.isArray(d.changed)) parts.push(`changed ${d.changed.join(", ")}`);
  return parts.join("; ");
}

export default async function AuditPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  await requireViewer("audit.read");
  const raw = await searchParams;
  const flat = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, (Array.isArray(v) ? v[0] : v) || undefined]));
  const q = ZAuditQuery.parse(flat);
  const { items, nextBefore, actions } = await findAuditEntries(getPrisma(), q);
  const keep = new URLSearchParams(Object.entries(flat).filter(([k, v]) => v && k !== "before") as [string, string][]);
  const nextHref = nextBefore ? `/audit?${new URLSearchParams({ ...Object.fromEntries(keep), before: nextBefore })}` : null;

  return (
    <section className="space-y-4">
      <div>
        <h1 className="text-2xl font-semibold">Audit</h1>
        <p className="mt-1 text-sm text-slate-600">Operator actions, newest first. Each row was written in the same transaction as the change it records.</p>
      </div>
      <form method="get" action="/audit" className={`${card} grid gap-3 sm:grid-cols-3 lg:grid-cols-6`} aria-label="Filter the audit log">
        <label className={label}>
          Actor
          <input name="actor" defaultValue={q.actor ?? ""} className={input} placeholder="user:ana@…" />
        </label>
        <label className={label}>
          Action
          <select name="action" defaultValue={q.action ?? ""} className={input}>
            <option value="">Any action</option>
            {actions.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </label>
        <label className={label}>
          Target type
          <select name="targetType" defaultValue={q.targetType ?? ""} className={input}>
            <option value="">Any</option>
            {["delivery", "subscription", "redrive_batch", "user", "token"].map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <label className={label}>
          Target id
          <input name="targetId" defaultValue={q.targetId ?? ""} className={input} placeholder="dlv_… / sub_… / rdb_…" />
        </label>
        <label className={label}>
          From (UTC)
          <input type="datetime-local" name="from" defaultValue={q.from?.slice(0, 16) ?? ""} className={input} />
        </label>
        <label className={label}>
          Before (UTC)
          <input type="datetime-local" name="to" defaultValue={q.to?.slice(0, 16) ?? ""} className={input} />
        </label>
        <div className="flex gap-2 sm:col-span-3 lg:col-span-6">
          <button type="submit" className={btnPrimary}>
            Filter
          </button>
          <Link href="/audit" className={btn}>
            Clear
          </Link>
        </div>
      </form>

      {items.length === 0 ? (
        <div className="rounded-lg border border-dashed border-slate-300 bg-white px-4 py-8 text-center text-slate-700">No operator actions match these filters.</div>
      ) : (
        <div className={`${card} overflow-x-auto p-0`}>
          <table className="w-full text-left text-sm">
            <thead className="bg-slate-50 text-slate-600">
              <tr>
                <th className="px-3 py-2 font-medium">When</th>
                <th className="px-3 py-2 font-medium">Actor</th>
                <th className="px-3 py-2 font-medium">Action</th>
                <th className="px-3 py-2 font-medium">Target</th>
                <th className="px-3 py-2 font-medium">Reason</th>
                <th className="px-3 py-2 font-medium">Details</th>
              </tr>
            </thead>
            <tbody>
              {items.map((e) => {
                const href = TARGET_LINK[e.targetType]?.(e.targetId);
                return (
                  <tr key={e.id} className="border-t border-slate-200 align-top">
                    <td className="whitespace-nowrap px-3 py-2">{fmtTime(e.createdAt)}</td>
                    <td className="px-3 py-2">{e.actor}</td>
                    <td className="px-3 py-2 font-mono text-xs">{e.action}</td>
                    <td className="px-3 py-2 font-mono text-xs">
                      {href ? (
                        <Link href={href} className="text-blue-700 hover:underline">
                          {e.targetId}
                        </Link>
                      ) : (
                        e.targetId
                      )}
                      <div className="font-sans text-slate-500">{e.targetType}</div>
                    </td>
                    <td className="px-3 py-2">{e.reason ?? "—"}</td>
                    <td className="px-3 py-2 text-slate-700">
                      {summarize(e.details)}
                      <details className="mt-1">
                        <summary className="cursor-pointer text-xs text-slate-500">JSON</summary>
                        <pre className="mt-1 max-w-md overflow-x-auto whitespace-pre-wrap break-all rounded bg-slate-50 p-2 text-xs">{JSON.stringify(e.details, null, 2)}</pre>
                      </details>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {nextHref && (
        <Link href={nextHref} className={btn}>
          Older entries
        </Link>
      )}
    </section>
  );
}

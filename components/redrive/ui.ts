// Class names shared by the redrive pages (the dashboard's look: slate, blue-700 actions).
export const card = "rounded-lg border border-slate-200 bg-white p-4 shadow-sm";
export const btn =
  "inline-flex items-center justify-center gap-1 rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm font-medium text-slate-800 shadow-sm hover:bg-slate-50 focus:outline-none focus-visible:ring-2 focus-visible:ring-blue-600 disabled:opacity-50";
export const btnPrimary =
  "inline-flex items-center justify-center gap-1 rounded-md bg-blue-700 px-3 py-1.5 text-sm font-medium text-white shadow-sm hover:bg-blue-800 focus:outline-none focus-visible:ring-2 focus-visible:ring-blue-600 focus-visible:ring-offset-2 disabled:opacity-50";
export const btnDanger =
  "inline-flex items-center justify-center gap-1 rounded-md bg-red-700 px-3 py-1.5 text-sm font-medium text-white shadow-sm hover:bg-red-800 focus:outline-none focus-visible:ring-2 focus-visible:ring-red-600 focus-visible:ring-offset-2 disabled:opacity-50";
export const input =
  "rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm text-slate-900 shadow-sm focus:border-blue-600 focus:outline-none focus:ring-2 focus:ring-blue-600/30";
export const label = "flex flex-col gap-1 text-sm font-medium text-slate-800";

export const STATUS_STYLE: Record<string, string> = {
  running: "bg-sky-100 text-sky-900 ring-sky-300",
  done: "bg-emerald-100 text-emerald-900 ring-emerald-300",
  cancelled: "bg-amber-100 text-amber-900 ring-amber-300",
};

/** UTC, the same on the server and in the browser (no hydration mismatch), and what support pastes into tickets. */
export function fmtTime(iso: string | null): string {
  if (!iso) return "—";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

export function describeFilter(f: Record<string, unknown>): string {
  const parts: string[] = [];
  if (f.subscriptionId) parts.push(`subscription ${f.subscriptionId}`);
  if (f.deadLetterReason) parts.push(`reason ${f.deadLetterReason}`);
  if (f.errorClass) parts.push(`error class ${f.errorClass}`);
  if (f.statusCode) parts.push(`HTTP ${f.statusCode}`);
  if (f.deadLetteredFrom) parts.push(`dead-lettered from ${fmtTime(String(f.deadLetteredFrom))}`);
  if (f.deadLetteredTo) parts.push(`until ${fmtTime(String(f.deadLetteredTo))}`);
  return parts.length ? parts.join(", ") : "every dead letter on an active subscription";
}

"use client";
// Times are absolute, with the zone named, plus a relative hint. The server
// renders UTC; after hydration the browser's own zone is used.
import { useEffect, useState } from "react";
import { formatAbsolute, formatRelative } from "@/lib/dashboard/describe";

/** The viewer's time zone once mounted ("UTC" during the server render). */
export function useTimeZone(): string {
  const [tz, setTz] = useState("UTC");
  useEffect(() => setTz(Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC"), []);
  return tz;
}

/** Re-renders every `ms` so relative hints stay current. */
export function useNow(ms = 1_000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

/** "14:03:12" today, "28 Nov, 14:03:12" otherwise, in `tz` (for sentences). */
export function shortTime(iso: string, tz: string): string {
  const d = new Date(iso);
  const sameDay = new Intl.DateTimeFormat("en-CA", { timeZone: tz }).format(d) === new Intl.DateTimeFormat("en-CA", { timeZone: tz }).format(new Date());
  return new Intl.DateTimeFormat("en-GB", {
    timeZone: tz,
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hour12: false,
    ...(sameDay ? {} : { day: "numeric", month: "short" }),
  }).format(d);
}

export function tzLabel(tz: string): string {
  const part = new Intl.DateTimeFormat("en-GB", { timeZone: tz, timeZoneName: "short" }).formatToParts(new Date()).find((p) => p.type === "timeZoneName");
  return part?.value ?? tz;
}

export function Time({ iso, className, relative = true }: { iso: string | null | undefined; className?: string; relative?: boolean }) {
  const tz = useTimeZone();
  const now = useNow(15_000);
  if (!iso) return <span className={className}>—</span>;
  return (
    <span className={className}>
      <time dateTime={iso} title={iso}>
        {formatAbsolute(iso, tz)}
      </time>
      {relative && <span className="text-slate-500"> · {formatRelative(iso, now)}</span>}
    </span>
  );
}

/** "Updated 3 s ago" for a polled query; says when a refresh failed. */
export function UpdatedAgo({ at, fetching, error }: { at: number; fetching?: boolean; error?: unknown }) {
  const now = useNow(1_000);
  const s = Math.max(0, Math.round((now - at) / 1000));
  return (
    <p className="flex items-center gap-2 text-xs text-slate-600" aria-live="polite">
      <span className={`inline-block h-2 w-2 rounded-full ${error ? "bg-amber-500" : fetching ? "bg-sky-500" : "bg-emerald-500"}`} aria-hidden />
      {error ? `Could not refresh (${(error as Error).message}); showing data from ${s} s ago` : `Updated ${s} s ago`}
      <span className="sr-only">, refreshes every 5 seconds while this tab is visible</span>
    </p>
  );
}

"use client";
// The dashboard's one time convention: every time is shown in the viewer's own
// time zone with the zone named ("14:05:12 CET", "28 Nov, 14:05:12 CET"), and
// the exact UTC instant (ISO 8601) in the tooltip. The server renders UTC;
// after hydration the browser's zone is used, so the first paint never
// mismatches. Sentences use useFormatTime; date-time inputs are in the same
// zone and say which (ZoneLabel, LocalDateTimeInput). Relative times ("3 s
// ago") likewise: the server's clock during the server render and hydration
// (RenderedAt), the browser's after.
import { createContext, useContext, useEffect, useState, useSyncExternalStore } from "react";
import { formatRelative } from "@/lib/dashboard/describe";

// The zone does not change while a page is open: nothing to subscribe to.
const noSubscription = () => () => {};
const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

/** The viewer's time zone ("UTC" during the server render and hydration, then the browser's). */
export function useTimeZone(): string {
  return useSyncExternalStore(noSubscription, browserZone, () => "UTC");
}

/** False during the server render and hydration, true after. */
export function useHydrated(): boolean {
  return useSyncExternalStore(
    noSubscription,
    () => true,
    () => false,
  );
}

const RenderedAtContext = createContext(0);

/** The server's clock when it rendered the page (the root layout sets it), for the first render in the browser. */
export function RenderedAt({ at, children }: { at: number; children: React.ReactNode }) {
  return <RenderedAtContext.Provider value={at}>{children}</RenderedAtContext.Provider>;
}

/**
 * Now, re-read every `ms` so relative hints stay current. While hydrating it is the server's render time: the
 * browser's own clock is a second or two later by then, and "Updated 0 s ago" hydrated as "Updated 2 s ago" is a
 * mismatch React reports and re-renders over. A component mounted after hydration starts at the browser's clock.
 */
export function useNow(ms = 1_000): number {
  const renderedAt = useContext(RenderedAtContext);
  const hydrated = useHydrated();
  const [now, setNow] = useState(() => (hydrated ? Date.now() : renderedAt));
  useEffect(() => {
    // The browser's clock from the first frame after hydration; a no-op re-render for a later mount.
    // eslint-disable-next-line react-hooks/set-state-in-effect
    setNow(Date.now());
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

const dayKey = (d: Date, tz: string) => new Intl.DateTimeFormat("en-CA", { timeZone: tz }).format(d);

/** "14:03:12 CET" today, "28 Nov, 14:03:12 CET" this year, "28 Nov 2025, 14:03:12 CET" before; in `tz`. */
export function formatTime(iso: string, tz: string, now = new Date()): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const sameDay = dayKey(d, tz) === dayKey(now, tz);
  const sameYear = dayKey(d, tz).slice(0, 4) === dayKey(now, tz).slice(0, 4);
  return new Intl.DateTimeFormat("en-GB", {
    timeZone: tz,
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hour12: false,
    timeZoneName: "short",
    ...(sameDay ? {} : sameYear ? { day: "numeric", month: "short" } : { day: "numeric", month: "short", year: "numeric" }),
  }).format(d);
}

/** "14:03" in `tz` (chart axes; the chart says which zone). */
export function formatClock(iso: string, tz: string): string {
  return new Intl.DateTimeFormat("en-GB", { hour: "2-digit", minute: "2-digit", hour12: false, timeZone: tz }).format(new Date(iso));
}

/** The zone's short name now ("CET", "UTC", "GMT-5"). */
export function tzLabel(tz: string): string {
  const part = new Intl.DateTimeFormat("en-GB", { timeZone: tz, timeZoneName: "short" }).formatToParts(new Date()).find((p) => p.type === "timeZoneName");
  return part?.value ?? tz;
}

/** A formatter for times inside sentences, in the viewer's zone with the zone named. */
export function useFormatTime(): (iso: string | null | undefined) => string {
  const tz = useTimeZone();
  return (iso) => (iso ? formatTime(iso, tz) : "—");
}

/** A time, in the viewer's zone with the zone named; the UTC ISO instant in the tooltip. */
export function Time({ iso, className, relative = true }: { iso: string | null | undefined; className?: string; relative?: boolean }) {
  const tz = useTimeZone();
  const now = useNow(15_000);
  if (!iso) return <span className={className}>—</span>;
  return (
    <span className={className}>
      <time dateTime={iso} title={new Date(iso).toISOString()}>
        {formatTime(iso, tz)}
      </time>
      {relative && <span className="text-slate-500"> · {formatRelative(iso, now)}</span>}
    </span>
  );
}

/** The viewer's zone name, for labels of date-time inputs ("From (CET)"). */
export function ZoneLabel() {
  return <>{tzLabel(useTimeZone())}</>;
}

/** ISO → the value of a datetime-local input, in the browser's zone. */
export function toLocalInput(iso: string | null | undefined): string {
  const d = new Date(iso ?? "");
  if (!iso || Number.isNaN(d.getTime())) return "";
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/**
 * A date-time input for a plain GET form: the viewer picks a time in their
 * own zone; the form submits `name` as a UTC ISO instant.
 */
export function LocalDateTimeInput({
  name,
  defaultIso,
  className,
  "aria-label": ariaLabel,
}: {
  name: string;
  defaultIso?: string;
  className?: string;
  "aria-label"?: string;
}) {
  const hydrated = useHydrated();
  const [edited, setLocal] = useState<string | null>(null);
  // Until the viewer edits it, the value is the URL's instant in the browser's zone (unknown on the server).
  const local = edited ?? (hydrated ? toLocalInput(defaultIso) : "");
  const d = local ? new Date(local) : null;
  return (
    <>
      <input type="datetime-local" className={className} value={local} onChange={(e) => setLocal(e.target.value)} aria-label={ariaLabel} />
      <input type="hidden" name={name} value={d && !Number.isNaN(d.getTime()) ? d.toISOString() : ""} />
    </>
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

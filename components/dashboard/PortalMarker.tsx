"use client";
// The district portal's header marker: which portal this is and when the session ends, in the viewer's own zone
// (UTC during the server render, like every time on the dashboard: components/ui/time.tsx).
import { formatClock, tzLabel, useTimeZone } from "@/components/ui/time";

export function PortalMarker({ expiresAt, readOnly }: { expiresAt: string; readOnly: boolean }) {
  const tz = useTimeZone();
  return (
    <span
      data-testid="portal-marker"
      title={`Signed in through a portal link${readOnly ? " (read-only)" : ""}; the session ends at ${expiresAt} (UTC)`}
      className="whitespace-nowrap rounded-md border border-emerald-200 bg-emerald-50 px-2 py-0.5 text-xs font-medium text-emerald-900"
    >
      District portal{readOnly ? " (read-only)" : ""} · ends at {formatClock(expiresAt, tz)} {tzLabel(tz)}
    </span>
  );
}

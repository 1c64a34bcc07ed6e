// Plain-words descriptions of a delivery and the text receipt support staff
// paste into a ticket. Pure and client-safe: times are formatted by the caller's
// formatter so the browser shows them in the viewer's own time zone.
import type { DeliveryWithAttempts } from "../ledger/read/types";

/** A delivery with its attempts: the one read shape (lib/ledger/read/types.ts). */
export type DeliveryLite = DeliveryWithAttempts;

export type TimeFmt = (iso: string) => string;

/** "503", "timeout", "503 Service Unavailable: upstream down"… short. */
export function answerOf(statusCode: number | null, errorClass: string | null, message?: string | null): string {
  const msg = message ? ` ${message.trim().slice(0, 80)}` : "";
  if (statusCode) return `${statusCode}${msg}`;
  if (errorClass) return `${errorClass.replace(/_/g, " ")}${msg}`;
  return msg.trim() || "no answer";
}

/** The one-line answer to "did it arrive?". */
export function describeDelivery(d: DeliveryLite, fmt: TimeFmt): { tone: "ok" | "wait" | "bad" | "held"; text: string } {
  const last = d.attempts[d.attempts.length - 1];
  const lastMessage = d.lastErrorMessage ?? last?.responseExcerpt ?? last?.errorMessage ?? null;
  switch (d.state) {
    case "delivered": {
      const ok = [...d.attempts].reverse().find((a) => a.outcome === "delivered");
      const when = d.deliveredAt ?? ok?.startedAt ?? d.lastAttemptAt;
      const http = ok?.statusCode ?? d.lastStatusCode;
      const ms = ok?.durationMs;
      return {
        tone: "ok",
        text: `Delivered ${when ? fmt(when) : ""} to ${d.subscriptionName}${http ? `, HTTP ${http}` : ""}${ms != null ? ` in ${ms} ms` : ""}`.replace("  ", " "),
      };
    }
    case "dead_letter": {
      const why = d.lastStatusCode || d.lastErrorClass ? answerOf(d.lastStatusCode, d.lastErrorClass, lastMessage) : (d.deadLetterReason ?? "unknown reason");
      return {
        tone: "bad",
        text: `Dead-lettered ${d.deadLetteredAt ? fmt(d.deadLetteredAt) : ""}: ${why}${d.deadLetterReason ? ` (${d.deadLetterReason.replace(/_/g, " ")})` : ""}`,
      };
    }
    case "resolved": {
      // An operator's decision, in the words a support agent can paste: which, by whom, why.
      const r = d.resolution;
      const by = r?.by ? r.by.replace(/^(user|token):/, "") : "an operator";
      const what = r ? r.resolution.replace(/_/g, " ") : "resolved";
      const was = d.deadLetterReason ? ` (dead-lettered: ${d.deadLetterReason.replace(/_/g, " ")})` : "";
      return { tone: "held", text: `Not delivered: resolved — ${what} by ${by}${r ? ` because ${r.reason}` : ""}${r?.at ? `, ${fmt(r.at)}` : ""}${was}` };
    }
    case "in_flight":
      return { tone: "wait", text: `Sending now: attempt ${d.attemptCount + 1} of ${d.maxAttempts} to ${d.subscriptionName}` };
    case "scheduled":
      return {
        tone: "wait",
        text: `Retrying: attempt ${d.attemptCount + 1} of ${d.maxAttempts}${d.nextAttemptAt ? `, next at ${fmt(d.nextAttemptAt)}` : ""}, last answer ${answerOf(d.lastStatusCode, d.lastErrorClass)}`,
      };
    default: {
      if (d.subscriptionState && d.subscriptionState !== "active")
        return { tone: "held", text: `Held: ${d.subscriptionName} is ${d.subscriptionState}; it will be sent when the subscription is resumed` };
      return { tone: "wait", text: `Queued: not sent yet to ${d.subscriptionName}${d.nextAttemptAt ? `, due ${fmt(d.nextAttemptAt)}` : ""}` };
    }
  }
}

/** A text receipt for a ticket: identity, every attempt, the final state. No secrets, no payload. */
export function deliveryReceipt(d: DeliveryLite, fmt: TimeFmt): string {
  const lines = [
    "hookledger delivery receipt",
    `Event:         ${d.eventId} (${d.eventType})`,
    `Subscription:  ${d.subscriptionName} [${d.subscriptionId}]${d.tenant ? `, tenant ${d.tenant}` : ""}`,
    `Delivery key:  ${d.deliveryKey}`,
    `Delivery id:   ${d.id}`,
    `Created:       ${fmt(d.createdAt)}`,
    "Attempts:",
  ];
  if (d.attempts.length === 0) lines.push("  (none yet)");
  for (const a of d.attempts) {
    const answer = a.statusCode ? `HTTP ${a.statusCode}` : (a.errorClass ?? "no answer");
    const extra = [
      a.errorClass && a.statusCode ? a.errorClass : null,
      a.durationMs != null ? `${a.durationMs} ms` : null,
      a.trigger !== "scheduled" ? `${a.trigger}${a.actor ? ` by ${a.actor}` : ""}` : null,
    ]
      .filter(Boolean)
      .join(", ");
    lines.push(`  #${a.attemptNumber}  ${fmt(a.startedAt)}  ${answer}  ${a.outcome}${extra ? ` (${extra})` : ""}`);
  }
  lines.push(`Final state:   ${describeDelivery(d, fmt).text}`);
  return lines.join("\n");
}

/** Absolute time with seconds and the zone, e.g. "29 Nov 2026, 14:03:12 UTC". */
export function formatAbsolute(iso: string, timeZone?: string): string {
  const d = new Date(iso);
  return new Intl.DateTimeFormat("en-GB", {
    day: "numeric",
    month: "short",
    year: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hour12: false,
    timeZone,
    timeZoneName: "short",
  }).format(d);
}

/** "3 min ago", "in 2 h", "just now". */
export function formatRelative(iso: string, now = Date.now()): string {
  const s = Math.round((new Date(iso).getTime() - now) / 1000);
  const abs = Math.abs(s);
  const [n, unit] =
    abs < 10
      ? [0, "now"]
      : abs < 60
        ? [abs, "s"]
        : abs < 3600
          ? [Math.round(abs / 60), "min"]
          : abs < 86400
            ? [Math.round(abs / 3600), "h"]
            : [Math.round(abs / 86400), "d"];
  if (unit === "now") return "just now";
  return s < 0 ? `${n} ${unit} ago` : `in ${n} ${unit}`;
}

/** "4 min", "2 h 5 min", "3 d 4 h": an age or duration in seconds. */
export function formatAge(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return "—";
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

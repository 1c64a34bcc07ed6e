// Plain-words descriptions of a delivery and the text receipt support staff
// paste into a ticket. Pure and client-safe: times are formatted by the caller's
// formatter so the browser shows them in the viewer's own time zone.
import type { DeliveryWithAttempts } from "../ledger/read/types";
import { actorInWords, count } from "../words";
import { ERROR_CLASS_WORDS, INTERRUPTED_ERROR_CLASSES, type ErrorClass } from "../ledger/states";
import { errorDetail } from "./error-words";

/** A delivery with its attempts (lib/ledger/read/types.ts) and, where the reader has it, its event's subject. */
export type DeliveryLite = DeliveryWithAttempts & {
  subject?: Record<string, string>;
  /** A fixed_at_source resolution's corrected event, where the reader has it (the delivery's detail, from its audit row). */
  correctedEventId?: string | null;
  /** The event catalog's summary fields of its type, read from its data ([label, value]), where the reader has them. */
  summary?: [string, string][];
};

export type TimeFmt = (iso: string) => string;

/** "assignment.graded" → "Assignment graded": the event type as a sentence's subject. */
export function eventTypeInWords(type: string): string {
  const words = type
    .split(/[._]/)
    .filter(Boolean)
    .join(" ")
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Who and what first, where and when after: the order a ticket names them in. Other keys follow alphabetically. */
const SUBJECT_ORDER = ["student", "assignment", "course", "section", "school", "term"];

/**
 * The subject's values with their keys in words ("studentId" → "student", "term_id" → "term"), student and
 * assignment first (the stored subject is jsonb, whose key order is its own). The tenant is left out: the card names
 * the district through its subscription.
 */
export function subjectInWords(subject: Record<string, string> | undefined): [string, string][] {
  const rank = (k: string) => (SUBJECT_ORDER.includes(k) ? SUBJECT_ORDER.indexOf(k) : SUBJECT_ORDER.length);
  return Object.entries(subject ?? {})
    .filter(([k]) => k !== "tenant")
    .map(([k, v]): [string, string] => [
      k
        .replace(/(_id|Id|ID)$/, "")
        .replace(/([a-z])([A-Z])/g, "$1 $2")
        .replace(/_/g, " ")
        .toLowerCase(),
      v,
    ])
    .sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b));
}

/** "Assignment graded for student stu_881, assignment asg_7": what the event is about, from its type and subject. */
export function aboutEvent(type: string, subject: Record<string, string> | undefined): string {
  const parts = subjectInWords(subject).map(([k, v]) => `${k} ${v}`);
  return `${eventTypeInWords(type)}${parts.length ? ` for ${parts.join(", ")}` : ""}`;
}

/**
 * The receiver's own words, short and quoted: the message of a JSON error body ({"error": "..."}, {"message": ...},
 * {"detail": ...}, {"errors": ["..."]}), the words of an HTML page (its title, else its text without the markup),
 * or the text itself, on one line, at most `max` characters. null when the answer has no words beyond its status
 * ("HTTP 503").
 */
export function quoteAnswer(excerpt: string | null | undefined, max = 120): string | null {
  if (!excerpt) return null;
  let text = excerpt.trim();
  try {
    const body: unknown = JSON.parse(text);
    const said = wordsOf(body);
    if (said) text = said;
  } catch {
    // Not JSON (or cut off at the stored excerpt): the text as it came, or an HTML page's words.
    if (/<\/?[a-z][^>]*>/i.test(text)) text = wordsOfHtml(text);
  }
  text = text.replace(/\s+/g, " ").trim();
  if (!text || /^HTTP \d{3}$/.test(text)) return null;
  return `“${text.length > max ? `${text.slice(0, max - 1)}…` : text}”`;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " ", "#39": "'" };

/** A page's title when it has one ("502 Bad Gateway"), else its text with the tags, scripts and styles taken out. */
function wordsOfHtml(html: string): string {
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(html)?.[1];
  const text = (title ?? html.replace(/<(script|style)[^>]*>[\s\S]*?(<\/\1>|$)/gi, " ").replace(/<[^>]*>?/g, " ")).replace(
    /&(amp|lt|gt|quot|apos|nbsp|#39);/g,
    (_, e: string) => ENTITIES[e],
  );
  // "<b>Fatal error</b>: …" reads "Fatal error: …", not "Fatal error : …".
  return text.trim() ? text.replace(/\s+([:;,.!?])/g, "$1") : html;
}

function wordsOf(body: unknown): string | null {
  if (typeof body === "string") return body;
  if (Array.isArray(body)) return body.map(wordsOf).filter(Boolean).join("; ") || null;
  if (body && typeof body === "object") {
    const o = body as Record<string, unknown>;
    for (const k of ["message", "error", "detail", "error_description", "errors", "title"]) {
      const w = wordsOf(o[k]);
      if (w) return w;
    }
  }
  return null;
}

/** An error class in the dashboard's words ("dns" → "DNS failure"); one it does not know, with spaces for underscores. */
function classInWords(errorClass: string): string {
  return ERROR_CLASS_WORDS[errorClass as ErrorClass] ?? errorClass.replace(/_/g, " ");
}

const INTERRUPTED = INTERRUPTED_ERROR_CLASSES;

/** "HTTP 503", "timeout", "HTTP 503 upstream down"…: the status once, then any words the message adds. */
export function answerOf(statusCode: number | null, errorClass: string | null, message?: string | null): string {
  const said = message?.trim().replace(new RegExp(`^(HTTP )?${statusCode ?? "\\d{3}"}\\b:?\\s*`), "") ?? "";
  const msg = said ? ` ${said.slice(0, 80)}` : "";
  if (statusCode) return `HTTP ${statusCode}${msg}`;
  if (errorClass && INTERRUPTED.includes(errorClass)) return `none recorded (${classInWords(errorClass)})`;
  if (errorClass) return `${classInWords(errorClass)}${msg}`;
  return msg.trim() || "none recorded";
}

const REASON_WORDS: Record<string, string> = {
  permanent: "permanent",
  exhausted: "gave up after every retry",
  gone: "the endpoint is gone; the subscription was disabled",
  target_blocked: "the address is not allowed",
  abandoned: "sending was interrupted every time",
};

/** What the receiver did, as the subject of "… (permanent) at …": "answered HTTP 422 “missing field term_id”". */
function whoSaidWhat(d: DeliveryLite): string {
  const last = d.attempts[d.attempts.length - 1];
  const status = last?.statusCode ?? d.lastStatusCode;
  const quote = quoteAnswer(last?.responseExcerpt) ?? quoteAnswer(last?.errorMessage ?? d.lastErrorMessage);
  if (status) return `answered HTTP ${status}${quote ? ` ${quote}` : ""}`;
  const cls = last?.errorClass ?? d.lastErrorClass;
  if (cls === "target_blocked") return "could not be sent to: its address is not allowed";
  if (cls && INTERRUPTED.includes(cls)) return "may have received it, but no answer was recorded";
  if (cls) return didNotAnswer(cls, last?.errorMessage ?? d.lastErrorMessage, quote);
  return "was not reached";
}

/**
 * A failure with no HTTP answer, as the card and the copied receipt both say it: the error's address or name in words
 * ("did not answer (connection refused: nothing was listening at 127.0.0.1:4801)"), not Node's code for it; the stored
 * message quoted only when it says something no words here do.
 */
function didNotAnswer(cls: string, message: string | null | undefined, quote: string | null): string {
  const detail = errorDetail(cls, message);
  if (detail) return `did not answer (${classInWords(cls)}: ${detail})`;
  return `did not answer (${classInWords(cls)})${quote ? ` ${quote}` : ""}`;
}

/** The one-line answer to "did it arrive?". */
export function describeDelivery(d: DeliveryLite, fmt: TimeFmt): { tone: "ok" | "wait" | "bad" | "held"; text: string } {
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
      const why = d.deadLetterReason ? ` (${REASON_WORDS[d.deadLetterReason] ?? d.deadLetterReason.replace(/_/g, " ")})` : "";
      return { tone: "bad", text: `Not delivered: ${d.subscriptionName} ${whoSaidWhat(d)}${why}${d.deadLetteredAt ? ` at ${fmt(d.deadLetteredAt)}` : ""}` };
    }
    case "resolved": {
      // An operator's decision, in the words a support agent can paste: which, by whom, why.
      const r = d.resolution;
      const by = r?.by ? actorInWords(r.by) : "an operator";
      const what = r ? r.resolution.replace(/_/g, " ") : "resolved";
      const was = d.deadLetterReason ? ` (dead-lettered: ${REASON_WORDS[d.deadLetterReason] ?? d.deadLetterReason})` : "";
      const fixed = d.correctedEventId ? `; corrected as ${d.correctedEventId}` : "";
      return { tone: "held", text: `Not delivered: resolved — ${what} by ${by}${r ? ` because ${r.reason}` : ""}${r?.at ? `, ${fmt(r.at)}` : ""}${was}${fixed}` };
    }
    case "in_flight":
      if (d.sending?.overdue)
        return {
          tone: "wait",
          text: `No answer recorded: attempt ${d.attemptCount + 1} of ${d.maxAttempts} to ${d.subscriptionName} began at ${fmt(d.sending.since)} and its time is up, as when sending is interrupted. If no result comes, it is taken back at ${fmt(d.sending.takenBackAt)} and sent again, with the same delivery key`,
        };
      return { tone: "wait", text: `Sending now: attempt ${d.attemptCount + 1} of ${d.maxAttempts} to ${d.subscriptionName}` };
    case "scheduled":
      // A paused or disabled subscription's scheduled delivery is held, not retrying (docs/GLOSSARY.md, Held).
      if (d.subscriptionState && d.subscriptionState !== "active")
        return {
          tone: "held",
          text: `Held: ${d.subscriptionName} is ${d.subscriptionState}; attempt ${d.attemptCount + 1} of ${d.maxAttempts} will be made when the subscription is resumed, last answer ${answerOf(d.lastStatusCode, d.lastErrorClass)}`,
        };
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

/** Where the delivery is now, in sentences a parent or a district can read. */
function receiptStatus(d: DeliveryLite, fmt: TimeFmt): string {
  const to = d.subscriptionName;
  const tries = count(d.totalAttempts, "attempt");
  switch (d.state) {
    case "delivered": {
      const when = d.deliveredAt ?? d.lastAttemptAt;
      return `It was delivered to ${to}${when ? ` on ${fmt(when)}` : ""}, after ${tries}: their system accepted it.`;
    }
    case "dead_letter": {
      const said = `${to} ${whoSaidWhat(d)}${d.deadLetteredAt ? ` on ${fmt(d.deadLetteredAt)}` : ""}`;
      const next: Record<string, string> = {
        permanent:
          "Their system refused this record, so sending the same data again will not help: it has to be corrected at the source or accepted by the district first.",
        exhausted: `We tried ${count(d.totalAttempts, "time")}, with pauses in between, and then stopped; our engineers can send it again once ${to} is answering.`,
        gone: `${to} told us the address no longer exists, so sending to it has stopped until the district gives a new one.`,
        target_blocked: `The address ${to} gave is not one we are allowed to send to; the district needs to give a public address.`,
        abandoned: "Sending was interrupted on every attempt; our engineers can send it again.",
      };
      return `It was not delivered. ${said}. ${next[d.deadLetterReason ?? ""] ?? "Our engineers can send it again once the cause is fixed."}`;
    }
    case "resolved": {
      const r = d.resolution;
      const what: Record<string, string> = {
        fixed_at_source: `the data was corrected at the source and sent again as a new event${d.correctedEventId ? ` (${d.correctedEventId})` : ""}`,
        superseded: "a newer record replaced it",
        discarded: "it is not needed",
        erased: "its data was erased on request",
      };
      return `It was not delivered, and will not be sent: ${r ? `${r.at ? `on ${fmt(r.at)} ` : ""}our team decided ${what[r.resolution] ?? r.resolution.replace(/_/g, " ")} (${r.reason}).` : "our team closed it."}`;
    }
    case "scheduled":
      if (d.subscriptionState && d.subscriptionState !== "active")
        return `It has not been delivered yet. ${to} ${whoSaidWhat(d)}${d.lastAttemptAt ? ` on ${fmt(d.lastAttemptAt)}` : ""}; sending to ${to} is ${d.subscriptionState}, and it will be tried again when sending resumes.`;
      return `It has not been delivered yet. ${to} ${whoSaidWhat(d)}${d.lastAttemptAt ? ` on ${fmt(d.lastAttemptAt)}` : ""}; we will try again${d.nextAttemptAt ? ` at ${fmt(d.nextAttemptAt)}` : ""} automatically.`;
    case "in_flight":
      if (d.sending?.overdue)
        return `It is being sent to ${to}, and no answer has been recorded yet; if none comes, it will be sent again automatically after ${fmt(d.sending.takenBackAt)}.`;
      return `It is being sent to ${to} right now.`;
    default:
      if (d.subscriptionState && d.subscriptionState !== "active")
        return `It has not been sent yet: sending to ${to} is ${d.subscriptionState}, and it will go out when sending resumes.`;
      return `It is queued and will be sent to ${to} shortly.`;
  }
}

/** One attempt in words: "Attempt 2 on 29 Nov 2026, 14:03:12 UTC: answered HTTP 200, accepted." */
function attemptLine(a: DeliveryLite["attempts"][number], fmt: TimeFmt): string {
  const quote = quoteAnswer(a.responseExcerpt) ?? quoteAnswer(a.errorMessage);
  const said = a.statusCode
    ? `answered HTTP ${a.statusCode}${quote ? ` ${quote}` : ""}`
    : a.errorClass && INTERRUPTED.includes(a.errorClass)
      ? `${classInWords(a.errorClass)} before an answer was recorded (it may have been received)`
      : a.errorClass
        ? didNotAnswer(a.errorClass, a.errorMessage, quote)
        : // No status and no class: nothing says why, so the receipt says what is known, as the card does ("No answer
          // recorded"), with the stored message when there is one, not a guess in brackets.
          `no answer recorded${quote ? ` ${quote}` : ""}`;
  const outcome: Record<string, string> = {
    delivered: "accepted",
    retry: "will be retried",
    dead_letter: "not retried",
    // The worker stopped before the answer was recorded: the delivery goes again with the same key while it has attempts left.
    abandoned: "to be sent again if attempts remain",
  };
  const by = a.trigger !== "scheduled" ? `, sent by hand${a.actor ? ` by ${a.actor.replace(/^(user|token):/, "")}` : ""}` : "";
  return `- Attempt ${a.attemptNumber} on ${fmt(a.startedAt)}: ${said}, ${outcome[a.outcome] ?? a.outcome.replace(/_/g, " ")}${by}.`;
}

/**
 * A receipt a support agent can paste to a parent or a district: what the event was about, what happened in plain
 * sentences, every attempt, then the ids an engineer needs. No internal codes in the sentences, no secrets, no payload.
 */
export function deliveryReceipt(d: DeliveryLite, fmt: TimeFmt): string {
  const lines = [
    `${aboutEvent(d.eventType, d.subject)}, sent to ${d.subscriptionName}${d.tenant ? ` (district ${d.tenant})` : ""}.`,
    receiptStatus(d, fmt),
    "",
    d.attempts.length === 0 ? "No attempt has been made yet." : "What happened:",
    ...d.attempts.map((a) => attemptLine(a, fmt)),
    "",
    "For our engineers:",
    `Event id: ${d.eventId} (${d.eventType}), received ${fmt(d.createdAt)}`,
    `Delivery id: ${d.id}`,
    `Delivery key (webhook-id): ${d.deliveryKey}`,
    `Subscription: ${d.subscriptionId}`,
  ];
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

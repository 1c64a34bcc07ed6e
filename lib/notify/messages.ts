// What a notice says, in the words of docs/GLOSSARY.md, for a person at the
// district rather than an engineer: what happened to which endpoint since
// when, the endpoint's last answer, what hookledger does next, and where to
// look. Pure functions: the worker's ingest (./ingest.ts) fills them in.
import type { NoticeContext, NotifyKind } from "../ledger/sql/notifications";
import { noun, count } from "../words";
import { displayUrl } from "../display-url";
import { ERROR_CLASS_WORDS, INTERRUPTED_ERROR_CLASSES, type ErrorClass } from "../ledger/states";
import { errorDetail } from "../dashboard/error-words";

export type Message = { subject: string; body: string };

const utcTime = (d: Date) => `${d.toISOString().slice(11, 16)} UTC`;
const utcDateTime = (d: Date) => `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;

/** "answered HTTP 503 “maintenance”", "did not answer (connection refused: …)", or null when nothing was sent yet. */
function lastAnswer(c: Pick<NoticeContext, "lastStatus" | "lastErrorClass" | "lastErrorMessage" | "lastExcerpt">): string | null {
  if (c.lastStatus !== null) {
    const excerpt = (c.lastExcerpt ?? "").replace(/\s+/g, " ").trim().slice(0, 160);
    return `answered HTTP ${c.lastStatus}${excerpt ? ` “${excerpt}”` : ""}`;
  }
  // Interrupted: the endpoint may have answered; the stored message is hookledger's own, about its worker's lease.
  if (c.lastErrorClass && INTERRUPTED_ERROR_CLASSES.includes(c.lastErrorClass)) return "may have answered, but no answer was recorded (sending was interrupted)";
  if (c.lastErrorClass) {
    const words = ERROR_CLASS_WORDS[c.lastErrorClass as ErrorClass] ?? c.lastErrorClass.replace(/_/g, " ");
    // The address or name in words where the message names one; Node's own message only when it says more than the class.
    const said = errorDetail(c.lastErrorClass, c.lastErrorMessage) ?? c.lastErrorMessage?.slice(0, 160);
    return `did not answer (${words}${said ? `: ${said}` : ""})`;
  }
  return null;
}

function minutes(seconds: number | null): string {
  if (!seconds) return "a few minutes";
  const m = Math.round(seconds / 60);
  return m <= 1 ? "every minute" : `every ${m} minutes`;
}

/** "1 delivery to … is a dead letter", "4 deliveries to … are dead letters". */
function deadLetters(depth: unknown, url: string): string {
  if (typeof depth !== "number") return `Deliveries to ${url} are dead letters`;
  return `${count(depth, "delivery", "deliveries")} to ${url} ${noun(depth, "is a dead letter", "are dead letters")}`;
}

/** The notice for one kind about one subscription. `data` is the operational event's data (or the secret's expiry). */
export function composeNotice(kind: NotifyKind, c: NoticeContext, data: Record<string, unknown>, link: string): Message {
  // A notice goes to every contact of the district (email, Slack, a webhook) and is stored for readers: the URL's credentials are masked.
  const url = displayUrl(c.url);
  const who = `${c.tenantName}: your endpoint ${url}`;
  const answer = lastAnswer(c);
  const answerLine = answer ? `Its last answer: it ${answer}${c.lastAt ? ` at ${utcDateTime(new Date(c.lastAt))}` : ""}.` : null;
  const footer = [`Subscription: ${c.subscriptionName} (${c.subscriptionId})`, `Open it: ${link}`];
  const lines = (...l: (string | null)[]) => l.filter((x): x is string => x !== null).join("\n");
  switch (kind) {
    case "paused": {
      const since = c.failingSince ?? (data.failingSince ? new Date(String(data.failingSince)) : null);
      return {
        subject: `${who} is paused after failing${since ? ` since ${utcTime(new Date(since))}` : ""}`,
        body: lines(
          `Every delivery to ${url} failed${since ? ` since ${utcDateTime(new Date(since))}` : ""}, so hookledger paused the subscription “${c.subscriptionName}” (paused for failing).`,
          answerLine,
          "",
          `What happens next: hookledger asks the endpoint whether it is back (a probe) ${minutes(c.probeIntervalSeconds)}, then less often. Deliveries are held, not dropped: nothing is lost. On the first 2xx answer the subscription resumes by itself and the held deliveries go out in order.`,
          "",
          ...footer,
        ),
      };
    }
    case "disabled":
      return {
        subject: `${who} is disabled: it answered 410 Gone`,
        body: lines(
          `The endpoint ${url} answered 410 Gone, which means “this address is no longer in use”, so hookledger disabled the subscription “${c.subscriptionName}”.`,
          answerLine,
          "",
          "What happens next: nothing is sent to it until someone re-enables it. New deliveries are held, not dropped. If the address moved, change the subscription's URL and resume it.",
          "",
          ...footer,
        ),
      };
    case "recovered":
      return {
        subject: `${who} is back: deliveries resumed`,
        body: lines(
          `The endpoint ${url} answered a probe with a 2xx, so the subscription “${c.subscriptionName}” is active again.`,
          "",
          "What happens next: the deliveries held while it was paused go out now, in order, at the subscription's own rate.",
          "",
          ...footer,
        ),
      };
    case "dlq_threshold":
      return {
        subject: `${c.tenantName}: ${typeof data.depth === "number" ? count(data.depth, "dead letter") : "many dead letters"} for ${url}`,
        body: lines(
          `${deadLetters(data.depth, url)} (the alert threshold is ${String(data.threshold ?? "set by your operator")}): hookledger gave up retrying.`,
          answerLine,
          "",
          "What happens next: they stay in the dead-letter queue until someone redrives or resolves them. Once the endpoint works, an operator can send them again.",
          "",
          ...footer,
        ),
      };
    case "dlq_old": {
      const oldest = data.oldestAt ? new Date(String(data.oldestAt)) : null;
      return {
        subject: `${c.tenantName}: dead letters for ${url} have waited since ${oldest ? utcDateTime(oldest) : "yesterday"}`,
        body: lines(
          `${deadLetters(data.depth, url)} (hookledger gave up retrying), the oldest since ${oldest ? utcDateTime(oldest) : "more than a day ago"}.`,
          answerLine,
          "",
          "What happens next: they wait in the dead-letter queue until someone redrives or resolves them; nothing is sent meanwhile. Once the endpoint works, an operator can send them again.",
          "",
          ...footer,
        ),
      };
    }
    case "secret_expiring": {
      const at = data.expiresAt ? new Date(String(data.expiresAt)) : null;
      return {
        subject: `${who}: the previous signing secret stops working${at ? ` at ${utcDateTime(at)}` : " within 24 hours"}`,
        body: lines(
          `The subscription “${c.subscriptionName}” got a new signing secret. Until ${at ? utcDateTime(at) : "the overlap ends"} every delivery is signed with both the old and the new one; after that, only with the new one.`,
          "",
          "What to do: make sure your receiver verifies with the new secret before then, or deliveries will fail its signature check.",
          "",
          ...footer,
        ),
      };
    }
  }
}

/** A digest: the newest notice's words with how many more came within the hour. */
export function digestSubject(subject: string, count: number): string {
  return `${subject} (and ${count} more in the last hour)`;
}

/**
 * Slack reads `<…>` in a message's text as a link with any label (`<https://…|Open hookledger>`) or a mention
 * (`<!channel>`), and asks for &, < and > to be escaped as HTML entities. A notice quotes the endpoint's own answer
 * and the subscription's name: escaped, they read as written, never as a disguised link or a ping of the channel.
 */
const slackEscaped = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** The webhook's text (Slack-compatible `{"text": …}`): the subject, then the body. */
export function webhookText(m: Message): string {
  return `*${slackEscaped(m.subject)}*\n${slackEscaped(m.body)}`;
}

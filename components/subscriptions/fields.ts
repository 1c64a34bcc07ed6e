// Parsing a subscription form's text fields into the API's body, and reading
// the API's refusal back onto the field it names (its 400 lists `body.<path>`).
// Text the browser cannot parse as a number is sent as it was typed, so the
// server's own rule answers it: one set of messages, the API's.
import { ApiError } from "@/lib/client/api";

/** A subscription form's fields, and the body paths of the API's refusal that belong to each (create and edit alike). */
export type SubscriptionField = "name" | "url" | "tenant" | "eventTypes" | "ladder" | "timeoutMs" | "rate" | "concurrency";
export const SUBSCRIPTION_FIELD_PATHS: Record<SubscriptionField, string[]> = {
  name: ["body.name"],
  url: ["body.url"],
  tenant: ["body.tenant"],
  eventTypes: ["body.eventTypes"],
  ladder: ["body.retryPolicy", "body.retryPolicy.ladderSeconds"],
  timeoutMs: ["body.retryPolicy.timeoutMs"],
  rate: ["body.rateLimitPerSecond"],
  concurrency: ["body.maxConcurrency"],
};

/** "30, 120 600" → [30, 120, 600]; a part that is not a number is kept as text for the API to refuse. */
export function parseList(text: string): (number | string)[] {
  return text
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((p) => (/^-?\d+(\.\d+)?$/.test(p) ? Number(p) : p));
}

/** "" → undefined; digits → a number; anything else as typed. */
export function parseNumber(text: string): number | string | undefined {
  const t = text.trim();
  if (!t) return undefined;
  return /^-?\d+(\.\d+)?$/.test(t) ? Number(t) : t;
}

/** The messages of an API refusal by form field: `paths` maps a field to the body paths it covers (longest prefix wins). */
export function errorsByField<F extends string>(err: unknown, paths: Record<F, string[]>): { fields: Partial<Record<F, string>>; other: string | null } {
  if (!(err instanceof ApiError)) return { fields: {}, other: err ? "The request failed; nothing was saved. Check the connection and try again." : null };
  const details = Array.isArray(err.details) ? (err.details as { path?: string; message?: string }[]) : [];
  const fields: Partial<Record<F, string>> = {};
  let placed = false;
  for (const d of details) {
    if (!d.path) continue;
    let best: F | null = null;
    let len = -1;
    for (const [f, ps] of Object.entries(paths) as [F, string[]][])
      for (const p of ps)
        if ((d.path === p || d.path.startsWith(`${p}.`)) && p.length > len) {
          best = f;
          len = p.length;
        }
    if (best && !fields[best]) {
      // The URL checks answer a code in `message` (e.g. "target_blocked"); their sentence is the error's own message.
      fields[best] = d.message && / /.test(d.message) ? d.message : err.message.replace(/^[\w.]+: /, "");
      placed = true;
    }
  }
  return { fields, other: placed ? null : err.message };
}

/** A wait of the retry ladder as people say it: 30 s, 2 min, 1 h, 24 h. */
export function waitText(seconds: number): string {
  if (seconds >= 3600 && seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds >= 60 && seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

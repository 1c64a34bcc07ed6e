// A redrive filter in words ("subscription sub_x, dead-letter reason retries
// exhausted, HTTP 422"),
// for the preview, the batches list and a batch's page. Times go through the
// caller's formatter (the viewer's zone, components/ui/time.tsx).
import { DEAD_LETTER_REASON_LABELS, DEAD_LETTER_REASON_TITLE, DEAD_LETTER_REASON_WORDS, ERROR_CLASS_LABELS, labelOf } from "@/components/ui/labels";

/**
 * `district`: in a district's words, its subscription by the name it gave it ("Hayes SIS, reason: gave up after every
 * retry"), from `names` (id → name); an id it has no name for shows as the id.
 */
export function describeFilter(f: Record<string, unknown>, fmt: (iso: string) => string, district?: { names: Record<string, string> }): string {
  if (district) return describeFilterInWords(f, fmt, district.names);
  const parts: string[] = [];
  if (f.subscriptionId) parts.push(`subscription ${f.subscriptionId}`);
  // The ledger's reason, named so: beside it the page asks for the operator's own (docs/GLOSSARY.md).
  if (f.deadLetterReason) parts.push(`${DEAD_LETTER_REASON_TITLE.toLowerCase()} ${labelOf(DEAD_LETTER_REASON_LABELS, String(f.deadLetterReason))}`);
  if (f.errorClass) parts.push(`error class ${labelOf(ERROR_CLASS_LABELS, String(f.errorClass))}`);
  if (f.statusCode) parts.push(`HTTP ${f.statusCode}`);
  if (f.deadLetteredFrom) parts.push(`dead-lettered from ${fmt(String(f.deadLetteredFrom))}`);
  if (f.deadLetteredTo) parts.push(`until ${fmt(String(f.deadLetteredTo))}`);
  return parts.length ? parts.join(", ") : "every dead letter on an active subscription";
}

function describeFilterInWords(f: Record<string, unknown>, fmt: (iso: string) => string, names: Record<string, string>): string {
  const parts: string[] = [];
  if (f.subscriptionId) parts.push(names[String(f.subscriptionId)] ?? `subscription ${f.subscriptionId}`);
  if (f.deadLetterReason) parts.push(`reason: ${labelOf(DEAD_LETTER_REASON_WORDS, String(f.deadLetterReason))}`);
  if (f.errorClass) parts.push(labelOf(ERROR_CLASS_LABELS, String(f.errorClass)));
  if (f.statusCode) parts.push(`answered HTTP ${f.statusCode}`);
  if (f.deadLetteredFrom) parts.push(`dead-lettered from ${fmt(String(f.deadLetteredFrom))}`);
  if (f.deadLetteredTo) parts.push(`until ${fmt(String(f.deadLetteredTo))}`);
  return parts.length ? `dead letters of ${parts.join(", ")}` : "every dead letter of your active subscriptions";
}

"use client";
// A tenant's notification contacts: addresses one per line (or comma-separated), an optional Slack-compatible
// webhook, and the district's own dead-letter threshold (empty: the operator's). Saving replaces them all; a refused
// field is named under the form and nothing is saved.
import { useState, useTransition } from "react";
import { btnPrimary, card, input } from "@/components/ui/kit";
import { BusySubmit } from "@/components/ui/LiveButton";
import { SavedStatus } from "@/components/ui/useInlineForm";
import { DLQ_THRESHOLD_FIELD } from "@/lib/notify/limits";
import { saveContactsAction } from "./actions";
import { count } from "@/lib/words";

export function ContactsForm({
  tenant,
  tenantName,
  emails,
  webhookUrl,
  dlqThreshold,
  defaultDlqThreshold,
}: {
  tenant: string;
  tenantName: string;
  emails: string[];
  webhookUrl: string | null;
  dlqThreshold: number | null;
  defaultDlqThreshold: number;
}) {
  const [pending, start] = useTransition();
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  return (
    <form
      className={`${card} space-y-3`}
      aria-label={`Notification contacts of ${tenantName}`}
      // A refusal speaks of the values it was given: once one is edited it no longer applies.
      onChange={() => setMessage((m) => (m && !m.ok ? null : m))}
      onSubmit={(e) => {
        e.preventDefault();
        const f = new FormData(e.currentTarget);
        // One address per line or between commas: a line with a space in it is one wrong address, not several.
        const list = String(f.get("emails") ?? "")
          .split(/[\n,;]+/)
          .map((x) => x.trim())
          .filter(Boolean);
        start(async () => {
          setMessage(null);
          const r = await saveContactsAction(tenant, {
            emails: list,
            webhookUrl: String(f.get("webhookUrl") ?? "").trim(),
            dlqThreshold: String(f.get("dlqThreshold") ?? "").trim(),
          });
          setMessage(
            r.ok
              ? {
                  ok: true,
                  text: `Saved: ${count(r.emails.length, "address", "addresses")}${r.webhookUrl ? " and a webhook" : ""}; told at ${deadLetters(r.dlqThreshold ?? defaultDlqThreshold)}${r.dlqThreshold === null ? " (the default)" : ""}.`,
                }
              : // The API's field name, emails.2, is the third address the person typed: name it as they see it.
                { ok: false, text: r.error.replace(/\bemails\.(\d+)/g, (_, i: string) => `address ${Number(i) + 1} (“${list[Number(i)] ?? ""}”)`) },
          );
        });
      }}
    >
      <h2 className="text-base font-semibold">Who is told when an endpoint fails</h2>
      <p className="text-sm text-slate-600">
        These people get an e-mail when an endpoint of {tenantName} is paused for failing, disabled, or back, when its dead letters reach the number below or one has
        waited a day, and a day before an old signing secret stops working. At most one notice of a kind an hour per subscription; repeats arrive together in one digest.
      </p>
      <label className="block text-sm">
        <span className="block font-medium text-slate-800">E-mail addresses</span>
        <span className="block text-xs text-slate-600">One per line, at most 20.</span>
        <textarea name="emails" rows={3} className={`${input} mt-1 w-full font-mono`} defaultValue={emails.join("\n")} placeholder="it@district.example" />
      </label>
      <label className="block text-sm">
        <span className="block font-medium text-slate-800">Chat webhook (optional)</span>
        <span className="block text-xs text-slate-600">A Slack-compatible incoming webhook URL; each notice is posted to it too.</span>
        <input name="webhookUrl" type="url" className={`${input} mt-1 w-full`} defaultValue={webhookUrl ?? ""} placeholder="https://hooks.slack.com/services/…" />
      </label>
      <label className="block text-sm">
        <span className="block font-medium text-slate-800">Dead letters before you are told</span>
        <span className="block text-xs text-slate-600">
          Per endpoint: you are told when one endpoint&apos;s dead letters reach this many, once until they fall below it again. Empty: the default, {defaultDlqThreshold}
          .
        </span>
        <input {...DLQ_THRESHOLD_FIELD} className={`${input} mt-1 w-40`} defaultValue={dlqThreshold ?? ""} placeholder={String(defaultDlqThreshold)} />
      </label>
      <div className="flex flex-wrap items-center gap-3">
        <BusySubmit busy={pending} className={btnPrimary}>
          {pending ? "Saving…" : "Save contacts"}
        </BusySubmit>
        <SavedStatus>{message?.ok ? message.text : null}</SavedStatus>
        {message && !message.ok && (
          <p role="alert" className="text-sm text-red-700">
            {message.text}
          </p>
        )}
      </div>
    </form>
  );
}

const deadLetters = (n: number) => count(n, "dead letter");

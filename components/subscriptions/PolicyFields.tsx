"use client";
// How a subscription is delivered to: its retry ladder, attempt timeout, rate
// limit and concurrency. The same four fields on "New subscription" and on
// the subscription's "Edit configuration"; each says what an empty field means.
import { DEFAULT_LADDER_SECONDS, DEFAULT_TIMEOUT_MS } from "@/lib/ledger/retry-policy";
import { input } from "@/components/ui/kit";
import { Field } from "@/components/ui/form";
import { waitText, type SubscriptionField } from "./fields";
import { num } from "@/lib/words";

export type PolicyValues = { ladder: string; timeoutMs: string; rate: string; concurrency: string };
/** The server's default (lib/subscriptions/manage-subscriptions.ts). */
const DEFAULT_MAX_CONCURRENCY = 10;

export function PolicyFields({
  values,
  onChange,
  errors,
  idPrefix,
  editing = false,
}: {
  values: PolicyValues;
  onChange: (v: PolicyValues) => void;
  errors: Partial<Record<SubscriptionField, string>>;
  /** Prefix of each field's error id (the input's aria-describedby). */
  idPrefix: string;
  /** Editing a subscription: an empty concurrency leaves it as it is (it always has one), rather than the default. */
  editing?: boolean;
}) {
  const props = (k: keyof PolicyValues) => ({
    className: input,
    value: values[k],
    onChange: (e: React.ChangeEvent<HTMLInputElement>) => onChange({ ...values, [k]: e.target.value }),
    ...(errors[k] ? { "aria-invalid": true, "aria-describedby": `${idPrefix}-${k}` } : {}),
  });
  const err = (k: keyof PolicyValues) => ({ errorId: `${idPrefix}-${k}`, error: errors[k] });
  return (
    <>
      <Field label="Retry ladder, seconds between attempts" hint={`Empty: the default, ${DEFAULT_LADDER_SECONDS.map(waitText).join(" → ")}.`} {...err("ladder")}>
        <input {...props("ladder")} placeholder={DEFAULT_LADDER_SECONDS.join(", ")} />
      </Field>
      <Field label="Attempt timeout, ms" hint={`Empty: the default, ${num(DEFAULT_TIMEOUT_MS)} ms.`} {...err("timeoutMs")}>
        <input {...props("timeoutMs")} inputMode="numeric" placeholder={String(DEFAULT_TIMEOUT_MS)} />
      </Field>
      <Field label="Rate limit, deliveries per second" hint="Empty: no limit." {...err("rate")}>
        <input {...props("rate")} inputMode="numeric" placeholder="none" />
      </Field>
      <Field label="Max concurrency, requests at once" hint={editing ? undefined : `Empty: the default, ${DEFAULT_MAX_CONCURRENCY}.`} {...err("concurrency")}>
        <input {...props("concurrency")} inputMode="numeric" placeholder={String(DEFAULT_MAX_CONCURRENCY)} />
      </Field>
    </>
  );
}

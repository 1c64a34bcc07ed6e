"use client";
// A subscription's configuration card: what it is (name, tenant, endpoint,
// event types, retry ladder, timeout, limits) and, for a manager, the form
// that edits it. Only what changed is sent, so an untouched field is never
// re-validated or re-audited; the API's refusal shows under the field it names.
// The endpoint URL is shown with its credentials masked (lib/display-url.ts);
// the form of a viewer who may change it holds the stored URL, masked until
// "Show" (as Svix shows an endpoint's signing secret), so a screen share of
// an open form does not give the district's ?code= away.
import { useState } from "react";
import type { SubscriptionOverview } from "@/lib/dashboard/subscriptions";
import { apiFetch } from "@/lib/client/api";
import { DEFAULT_LADDER_SECONDS } from "@/lib/ledger/retry-policy";
import { Card, btn, input } from "@/components/ui/kit";
import { Field, FormActions, FormAlert } from "@/components/ui/form";
import { LiveButton } from "@/components/ui/LiveButton";
import { SavedStatus, useInlineForm } from "@/components/ui/useInlineForm";
import { useViewerTenant } from "@/components/dashboard/ViewerTenant";
import { PolicyFields, type PolicyValues } from "./PolicyFields";
import { SUBSCRIPTION_FIELD_PATHS, errorsByField, parseList, parseNumber, waitText, type SubscriptionField } from "./fields";
import { CatalogTypeChips } from "@/components/catalog/CatalogTypeChips";
import { TenantInput, useTenantSuggestions } from "@/components/ui/TenantPicker";
import { displayUrl } from "@/lib/display-url";

type RetryPolicy = { ladderSeconds?: number[]; maxAgeSeconds?: number; timeoutMs?: number };
const policyOf = (o: SubscriptionOverview) => (o.retryPolicy ?? {}) as RetryPolicy;

function ConfigView({ o }: { o: SubscriptionOverview }) {
  const district = useViewerTenant();
  const policy = policyOf(o);
  const rows: [string, React.ReactNode][] = [
    ["Name", o.name],
    // A district's viewer reads its own name under its own word.
    district?.id === o.tenant ? ["District", district.name] : ["Tenant", o.tenant ?? "none: every tenant's events"],
    [
      "Endpoint URL",
      <span key="u" className="break-all font-mono text-xs">
        {o.url}
      </span>,
    ],
    ["Event types", o.eventTypes.join(", ")],
    ["Retry ladder", `${policy.ladderSeconds ? "" : "default: "}${(policy.ladderSeconds ?? DEFAULT_LADDER_SECONDS).map(waitText).join(" → ")}`],
    ["Attempt timeout", policy.timeoutMs ? `${policy.timeoutMs} ms` : "default"],
    ["Rate limit", o.rateLimitPerSecond ? `${o.rateLimitPerSecond}/s` : "none"],
    ["Max concurrency", String(o.maxConcurrency)],
  ];
  return (
    <dl className="grid grid-cols-1 gap-x-6 gap-y-2 text-sm sm:grid-cols-2">
      {rows.map(([k, v]) => (
        <div key={k} className="min-w-0">
          <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">{k}</dt>
          <dd className="text-slate-900 wrap-anywhere">{v}</dd>
        </div>
      ))}
    </dl>
  );
}

/** The URL the form starts from: the stored one when the server gave it (the viewer may change the subscription). */
const urlOf = (o: SubscriptionOverview) => o.storedUrl ?? o.url;

/** The PATCH body: only the fields whose value differs from the subscription's. */
function changedFields(o: SubscriptionOverview, v: { name: string; url: string; types: string; policy: PolicyValues; tenant: string | null }) {
  const body: Record<string, unknown> = {};
  if (v.name !== o.name) body.name = v.name;
  if (v.url.trim() !== urlOf(o)) body.url = v.url.trim();
  const eventTypes = v.types.split(/[\s,]+/).filter(Boolean);
  if (eventTypes.join() !== o.eventTypes.join()) body.eventTypes = eventTypes;
  const retryPolicy: Record<string, unknown> = { ...(o.retryPolicy as object) };
  if (v.policy.ladder.trim()) retryPolicy.ladderSeconds = parseList(v.policy.ladder);
  else delete retryPolicy.ladderSeconds;
  const t = parseNumber(v.policy.timeoutMs);
  if (t !== undefined) retryPolicy.timeoutMs = t;
  else delete retryPolicy.timeoutMs;
  if (JSON.stringify(retryPolicy) !== JSON.stringify(o.retryPolicy ?? {})) body.retryPolicy = retryPolicy;
  const r = parseNumber(v.policy.rate) ?? null;
  if (r !== o.rateLimitPerSecond) body.rateLimitPerSecond = r;
  const c = parseNumber(v.policy.concurrency);
  if (c !== undefined && c !== o.maxConcurrency) body.maxConcurrency = c;
  if (v.tenant !== null && v.tenant !== (o.tenant ?? "")) body.tenant = v.tenant || null;
  return body;
}

// What the status line names after a save, by the PATCH body's field.
const FIELD_WORDS: Record<string, string> = {
  name: "name",
  url: "endpoint URL",
  eventTypes: "event types",
  retryPolicy: "retry policy",
  rateLimitPerSecond: "rate limit",
  maxConcurrency: "max concurrency",
  tenant: "tenant",
};

function ConfigEditForm({ o, onSaved, onCancel }: { o: SubscriptionOverview; onSaved: (status: string) => void; onCancel: () => void }) {
  const policy = policyOf(o);
  const district = useViewerTenant();
  const [name, setName] = useState(o.name);
  const [url, setUrl] = useState(urlOf(o));
  // Masked until asked for; a URL without a credential has nothing to hide and is edited at once.
  const [shown, setShown] = useState(false);
  const masked = displayUrl(url);
  const hidden = !shown && masked !== url;
  const [types, setTypes] = useState(o.eventTypes.join(", "));
  const [values, setValues] = useState<PolicyValues>({
    ladder: policy.ladderSeconds?.join(", ") ?? "",
    timeoutMs: policy.timeoutMs ? String(policy.timeoutMs) : "",
    rate: o.rateLimitPerSecond ? String(o.rateLimitPerSecond) : "",
    concurrency: String(o.maxConcurrency),
  });
  const [tenant, setTenant] = useState(o.tenant ?? "");
  // Moving a subscription between tenants is a global admin's: the tenants list answers only them (403 otherwise), so
  // the choice is offered exactly when the server would accept it; a district's viewer never asks.
  // Any tenant may be typed, with the matching ones suggested (there may be thousands; a select would stop at a page).
  const tenants = useTenantSuggestions(tenant, !district);
  const canMove = !district && tenants.ok;
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const { fields: errs, other: otherError } = errorsByField(error, SUBSCRIPTION_FIELD_PATHS);
  const invalid = (f: SubscriptionField) => (errs[f] ? { "aria-invalid": true, "aria-describedby": `config-${f}-error` } : {});
  const err = (f: SubscriptionField) => ({ errorId: `config-${f}-error`, error: errs[f] });
  async function save(e: React.FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body = changedFields(o, { name, url, types, policy: values, tenant: canMove ? tenant : null });
      const changed = Object.keys(body);
      if (changed.length > 0) await apiFetch(`/api/v1/subscriptions/${encodeURIComponent(o.id)}`, { method: "PATCH", body });
      onSaved(changed.length > 0 ? `Saved: ${changed.map((k) => FIELD_WORDS[k] ?? k).join(", ")}.` : "Nothing changed; nothing was saved.");
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }
  return (
    <form onSubmit={save} noValidate className="grid grid-cols-1 gap-3 text-sm sm:grid-cols-2" aria-label="Edit configuration">
      <Field label="Name" className="sm:col-span-2" {...err("name")}>
        {/* The Edit button that had focus is gone once the form is open: focus starts on its first field. */}
        <input className={input} value={name} onChange={(e) => setName(e.target.value)} autoFocus {...invalid("name")} />
      </Field>
      <Field
        label="Endpoint URL"
        className="sm:col-span-2"
        hint={hidden ? "The credential in the URL is hidden (****); Show it to read or change it." : undefined}
        {...err("url")}
      >
        <span className="flex min-w-0 gap-2">
          <input
            className={`${input} min-w-0 flex-1 ${hidden ? "bg-slate-50 text-slate-600" : ""}`}
            value={hidden ? masked : url}
            readOnly={hidden}
            onChange={(e) => setUrl(e.target.value)}
            {...invalid("url")}
          />
          {(shown || hidden) && (
            <button type="button" className={btn} aria-pressed={shown} onClick={() => setShown(!shown)}>
              {shown ? "Hide" : "Show"}
            </button>
          )}
        </span>
      </Field>
      {canMove && (
        <Field
          label="Tenant (empty: none, every tenant's events; moving it takes its future deliveries to that district's view)"
          className="sm:col-span-2"
          {...err("tenant")}
        >
          <TenantInput value={tenant} onChange={setTenant} suggestions={tenants.items} placeholder="None: every tenant's events" {...invalid("tenant")} />
        </Field>
      )}
      <Field
        label={district ? "Event types (comma-separated)" : "Event types (comma-separated; * for all, admins only)"}
        className="sm:col-span-2"
        {...err("eventTypes")}
      >
        <input className={input} value={types} onChange={(e) => setTypes(e.target.value)} {...invalid("eventTypes")} />
      </Field>
      <CatalogTypeChips value={types} onChange={setTypes} />
      <PolicyFields values={values} onChange={setValues} errors={errs} idPrefix="config" editing />
      <FormAlert className="sm:col-span-2">{otherError}</FormAlert>
      <FormActions className="sm:col-span-2" busy={busy} submitLabel="Save" onCancel={onCancel} />
    </form>
  );
}

/**
 * `version`: what the card shows, as a key for the open form, so a change saved elsewhere starts it again from the new
 * values. Only the form is keyed: remounting the card after its own save would take the Edit button that focus
 * returned to, and the status line that says what was saved, with it.
 */
export function SubscriptionConfig({ o, version, canEdit, onDone }: { o: SubscriptionOverview; version: string; canEdit: boolean; onDone: () => void }) {
  const form = useInlineForm();
  return (
    <Card
      title="Configuration"
      id="config"
      actions={
        canEdit && !form.open ? (
          <LiveButton ref={form.opener("form")} className={btn} onClick={() => form.start("form")}>
            Edit
          </LiveButton>
        ) : null
      }
    >
      {form.open ? (
        <ConfigEditForm
          key={version}
          o={o}
          onCancel={() => form.close()}
          onSaved={(status) => {
            form.close(status);
            onDone();
          }}
        />
      ) : (
        <ConfigView o={o} />
      )}
      <SavedStatus className="mt-3">{form.status}</SavedStatus>
    </Card>
  );
}

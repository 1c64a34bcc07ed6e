"use client";
// "New subscription": the fields of POST /api/v1/subscriptions, checked by the
// server's rules (the API's message shows next to the field it names, and a
// refused create writes nothing), then the signing secret shown once.
import Link from "next/link";
import { useEffect, useId, useRef, useState } from "react";
import { apiFetch } from "@/lib/client/api";
import { btn, btnPrimary, input, label as labelClass } from "@/components/ui/kit";
import { Field, FieldError, FormActions, FormAlert } from "@/components/ui/form";
import { useViewerTenant } from "@/components/dashboard/ViewerTenant";
import { useTenantIds } from "@/components/ui/TenantPicker";
import { SecretOnce } from "./SecretOnce";
import { Modal } from "@/components/ui/Modal";
import { PolicyFields, type PolicyValues } from "./PolicyFields";
import { SUBSCRIPTION_FIELD_PATHS, errorsByField, parseList, parseNumber, type SubscriptionField } from "./fields";
import { num } from "@/lib/words";

type Created = { id: string; name: string; secret: string };
type Errors = Partial<Record<SubscriptionField, string>>;
const invalid = (errs: Errors, f: SubscriptionField, ids: string) => (errs[f] ? { "aria-invalid": true, "aria-describedby": `${ids}-${f}` } : {});

function CreatedNotice({ created, onClose }: { created: Created; onClose: () => void }) {
  const district = useViewerTenant();
  return (
    <div className="space-y-3">
      <SecretOnce
        secret={created.secret}
        note={
          district
            ? "Keep it where your endpoint reads it (WEBHOOK_SECRET below), and nowhere else; hookledger signs every delivery to this endpoint with it."
            : "Give it to the district over a channel you trust; hookledger signs every delivery to this endpoint with it."
        }
      />
      <div className="flex flex-wrap gap-2">
        <Link className={btnPrimary} href={`/subscriptions/${encodeURIComponent(created.id)}`}>
          Open the subscription
        </Link>
        <button type="button" className={btn} onClick={onClose}>
          Done
        </button>
      </div>
    </div>
  );
}

/** The tenant: fixed for a district's viewer (the server answers 403 to any other), else typed, with the known ones offered. */
function TenantField({
  tenants,
  canSubscribeAll,
  value,
  onChange,
  errs,
  ids,
}: {
  tenants: string[];
  canSubscribeAll: boolean;
  value: string;
  onChange: (v: string) => void;
  errs: Errors;
  ids: string;
}) {
  const district = useViewerTenant();
  const suggested = useTenantIds(value, tenants, !district).ids;
  if (district)
    return (
      <div className={labelClass} data-testid="fixed-tenant">
        <span>District</span>
        <span className="py-1.5 text-sm font-normal text-slate-900">
          {district.name} <span className="font-mono text-xs text-slate-500">{district.id}</span>
        </span>
        <FieldError id={`${ids}-tenant`} message={errs.tenant} />
      </div>
    );
  return (
    // Leaving it empty (every tenant's events) is an admin's choice, like *; anyone else names an existing district.
    <Field label={canSubscribeAll ? "Tenant (empty: every tenant)" : "Tenant"} errorId={`${ids}-tenant`} error={errs.tenant}>
      <input
        className={input}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        list={`${ids}-tenants`}
        placeholder="westfield"
        {...invalid(errs, "tenant", ids)}
      />
      <datalist id={`${ids}-tenants`}>
        {suggested.map((t) => (
          <option key={t} value={t} />
        ))}
      </datalist>
    </Field>
  );
}

/** The event types: the published ones to tick (and * for admins), and others typed in. */
type EventTypeChoice = { picked: string[]; other: string };

function EventTypesField({
  eventTypes,
  more,
  canSubscribeAll,
  value: { picked, other },
  onChange,
  errs,
  ids,
}: {
  eventTypes: string[];
  more: boolean;
  canSubscribeAll: boolean;
  value: EventTypeChoice;
  onChange: (v: EventTypeChoice) => void;
  errs: Errors;
  ids: string;
}) {
  const toggle = (t: string) => onChange({ other, picked: picked.includes(t) ? picked.filter((x) => x !== t) : [...picked, t] });
  return (
    <fieldset className="sm:col-span-2" {...invalid(errs, "eventTypes", ids)}>
      <legend className="text-sm font-medium text-slate-800">Event types</legend>
      {eventTypes.length === 0 && !canSubscribeAll && <p className="text-sm text-slate-600">No event types are catalogued or published yet: name them below.</p>}
      <div className="mt-1 grid max-h-40 grid-cols-1 gap-1 overflow-y-auto rounded-md border border-slate-200 p-2 sm:grid-cols-2">
        {canSubscribeAll && (
          <label className="flex items-center gap-2 text-sm text-slate-800">
            <input type="checkbox" checked={picked.includes("*")} onChange={() => toggle("*")} />
            <span>
              <code className="font-mono">*</code> every type, also future ones (admins only)
            </span>
          </label>
        )}
        {eventTypes.map((t) => (
          <label key={t} className="flex min-w-0 items-center gap-2 text-sm text-slate-800">
            <input type="checkbox" checked={picked.includes(t)} onChange={() => toggle(t)} />
            <span className="truncate font-mono text-xs">{t}</span>
          </label>
        ))}
      </div>
      {more && (
        <p className="mt-1 text-xs text-slate-600" data-testid="event-types-cut">
          Lists the first {num(eventTypes.length)} types by name; name any other below.
        </p>
      )}
      <Field label="Other types, not listed above (comma-separated)" className="mt-2">
        <input className={input} value={other} onChange={(e) => onChange({ picked, other: e.target.value })} placeholder="attendance.recorded" />
      </Field>
      <FieldError id={`${ids}-eventTypes`} message={errs.eventTypes} />
    </fieldset>
  );
}

export function NewSubscriptionDialog({
  tenants,
  eventTypes,
  eventTypesMore = false,
  canSubscribeAll,
  onClose,
  onCreated,
}: {
  tenants: string[];
  eventTypes: string[];
  /** More types exist than `eventTypes` holds: the list says it is cut, and the others are typed. */
  eventTypesMore?: boolean;
  canSubscribeAll: boolean;
  onClose: () => void;
  onCreated: () => void;
}) {
  const ids = useId();
  const district = useViewerTenant();
  const [name, setName] = useState("");
  const [url, setUrl] = useState("");
  const [tenant, setTenant] = useState("");
  const [types, setTypes] = useState<EventTypeChoice>({ picked: [], other: "" });
  const [policy, setPolicy] = useState<PolicyValues>({ ladder: "", timeoutMs: "", rate: "", concurrency: "" });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<Created | null>(null);
  const notice = useRef<HTMLDivElement>(null);
  // Once created, the signing secret is on screen this one time: neither Escape nor a click outside closes the dialog,
  // Done or "Open the subscription" does; and focus moves to the secret's copy button, since the form (and the button
  // just pressed) is gone.
  useEffect(() => {
    if (created) notice.current?.querySelector<HTMLElement>('[data-testid="secret-once"] button')?.focus();
  }, [created]);

  const { fields: errs, other: otherError } = errorsByField(error, SUBSCRIPTION_FIELD_PATHS);

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const retryPolicy: Record<string, unknown> = {};
    if (policy.ladder.trim()) retryPolicy.ladderSeconds = parseList(policy.ladder);
    const t = parseNumber(policy.timeoutMs);
    if (t !== undefined) retryPolicy.timeoutMs = t;
    const body: Record<string, unknown> = {
      name,
      url: url.trim(),
      eventTypes: [...types.picked, ...types.other.split(/[\s,]+/).filter(Boolean)],
      ...(district ? { tenant: district.id } : tenant.trim() ? { tenant: tenant.trim() } : {}),
      ...(Object.keys(retryPolicy).length ? { retryPolicy } : {}),
    };
    const r = parseNumber(policy.rate);
    if (r !== undefined) body.rateLimitPerSecond = r;
    const c = parseNumber(policy.concurrency);
    if (c !== undefined) body.maxConcurrency = c;
    try {
      setCreated(await apiFetch<Created>("/api/v1/subscriptions", { body }));
      onCreated();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Modal title={created ? `Subscription ${created.name} created` : "New subscription"} onClose={onClose} dismissible={!created} wide>
      {created ? (
        <div ref={notice}>
          <CreatedNotice created={created} onClose={onClose} />
        </div>
      ) : (
        <form onSubmit={submit} noValidate className="grid grid-cols-1 gap-3 sm:grid-cols-2">
          <Field label="Name" errorId={`${ids}-name`} error={errs.name}>
            <input className={input} value={name} onChange={(e) => setName(e.target.value)} placeholder="Westfield SIS" {...invalid(errs, "name", ids)} />
          </Field>
          <TenantField tenants={tenants} canSubscribeAll={canSubscribeAll} value={tenant} onChange={setTenant} errs={errs} ids={ids} />
          <Field label="Endpoint URL" className="sm:col-span-2" errorId={`${ids}-url`} error={errs.url}>
            <input
              className={input}
              value={url}
              onChange={(e) => setUrl(e.target.value)}
              inputMode="url"
              placeholder="https://sis.westfield.example/hooks"
              {...invalid(errs, "url", ids)}
            />
          </Field>
          <EventTypesField eventTypes={eventTypes} more={eventTypesMore} canSubscribeAll={canSubscribeAll} value={types} onChange={setTypes} errs={errs} ids={ids} />
          <PolicyFields values={policy} onChange={setPolicy} errors={errs} idPrefix={ids} />
          <FormAlert className="sm:col-span-2">{otherError}</FormAlert>
          <FormActions className="sm:col-span-2" busy={busy} busyLabel="Creating…" submitLabel="Create subscription" onCancel={onClose} />
        </form>
      )}
    </Modal>
  );
}

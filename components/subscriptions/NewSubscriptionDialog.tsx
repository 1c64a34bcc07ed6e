"use client";
// "New subscription": the fields of POST /api/v1/subscriptions, checked by the
// server's rules (the API's message shows next to the field it names, and a
// refused create writes nothing), then the signing secret shown once.
import Link from "next/link";
import { useEffect, useId, useRef, useState } from "react";
import { apiFetch } from "@/lib/client/api";
import { DEFAULT_LADDER_SECONDS, DEFAULT_TIMEOUT_MS } from "@/lib/ledger/retry-policy";
import { btn, btnPrimary, input, label as labelClass } from "@/components/ui/kit";
import { useViewerTenant } from "@/components/dashboard/ViewerTenant";
import { SecretOnce } from "./SecretOnce";
import { errorsByField, parseList, parseNumber, waitText } from "./fields";

type Field = "name" | "url" | "tenant" | "eventTypes" | "ladder" | "timeoutMs" | "rate" | "concurrency";
const PATHS: Record<Field, string[]> = {
  name: ["body.name"],
  url: ["body.url"],
  tenant: ["body.tenant"],
  eventTypes: ["body.eventTypes"],
  ladder: ["body.retryPolicy", "body.retryPolicy.ladderSeconds"],
  timeoutMs: ["body.retryPolicy.timeoutMs"],
  rate: ["body.rateLimitPerSecond"],
  concurrency: ["body.maxConcurrency"],
};
/** The server's default (lib/subscriptions/service.ts). */
const DEFAULT_MAX_CONCURRENCY = 10;

export function FieldError({ id, message }: { id: string; message?: string }) {
  if (!message) return null;
  return (
    <span id={id} role="alert" className="text-sm font-normal text-red-700">
      {message}
    </span>
  );
}

export function NewSubscriptionDialog({
  tenants,
  eventTypes,
  canSubscribeAll,
  onClose,
  onCreated,
}: {
  tenants: string[];
  eventTypes: string[];
  canSubscribeAll: boolean;
  onClose: () => void;
  onCreated: () => void;
}) {
  const ids = useId();
  // A district's viewer creates for its own district only (the server answers 403 otherwise): the tenant is fixed, not asked.
  const district = useViewerTenant();
  const [name, setName] = useState("");
  const [url, setUrl] = useState("");
  const [tenant, setTenant] = useState("");
  const [picked, setPicked] = useState<string[]>([]);
  const [other, setOther] = useState("");
  const [ladder, setLadder] = useState("");
  const [timeoutMs, setTimeoutMs] = useState("");
  const [rate, setRate] = useState("");
  const [concurrency, setConcurrency] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<{ id: string; name: string; secret: string } | null>(null);
  const first = useRef<HTMLInputElement>(null);

  useEffect(() => {
    first.current?.focus();
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && onClose();
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [onClose]);

  const { fields: errs, other: otherError } = errorsByField(error, PATHS);
  const describe = (f: Field) => (errs[f] ? { "aria-invalid": true, "aria-describedby": `${ids}-${f}` } : {});
  const toggle = (t: string) => setPicked((p) => (p.includes(t) ? p.filter((x) => x !== t) : [...p, t]));

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const retryPolicy: Record<string, unknown> = {};
    if (ladder.trim()) retryPolicy.ladderSeconds = parseList(ladder);
    const t = parseNumber(timeoutMs);
    if (t !== undefined) retryPolicy.timeoutMs = t;
    const body: Record<string, unknown> = {
      name,
      url: url.trim(),
      eventTypes: [...picked, ...other.split(/[\s,]+/).filter(Boolean)],
      ...(district ? { tenant: district.id } : tenant.trim() ? { tenant: tenant.trim() } : {}),
      ...(Object.keys(retryPolicy).length ? { retryPolicy } : {}),
    };
    const r = parseNumber(rate);
    if (r !== undefined) body.rateLimitPerSecond = r;
    const c = parseNumber(concurrency);
    if (c !== undefined) body.maxConcurrency = c;
    try {
      const sub = await apiFetch<{ id: string; name: string; secret: string }>("/api/v1/subscriptions", { body });
      setCreated(sub);
      onCreated();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <div
      className="fixed inset-0 z-50 flex items-start justify-center overflow-y-auto bg-slate-900/40 p-2 sm:items-center sm:p-4"
      onClick={(e) => e.target === e.currentTarget && !created && onClose()}
    >
      <div role="dialog" aria-modal="true" aria-labelledby={`${ids}-title`} className="my-2 w-full max-w-2xl rounded-lg bg-white p-4 text-left shadow-xl sm:p-5">
        <h2 id={`${ids}-title`} className="text-lg font-semibold text-slate-900">
          {created ? `Subscription ${created.name} created` : "New subscription"}
        </h2>
        {created ? (
          <div className="mt-3 space-y-3">
            <SecretOnce secret={created.secret} note="Give it to the district over a channel you trust; hookledger signs every delivery to this endpoint with it." />
            <div className="flex flex-wrap gap-2">
              <Link className={btnPrimary} href={`/subscriptions/${encodeURIComponent(created.id)}`}>
                Open the subscription
              </Link>
              <button type="button" className={btn} onClick={onClose}>
                Done
              </button>
            </div>
          </div>
        ) : (
          <form onSubmit={submit} noValidate className="mt-3 grid grid-cols-1 gap-3 sm:grid-cols-2">
            <label className={labelClass}>
              <span>Name</span>
              <input ref={first} className={input} value={name} onChange={(e) => setName(e.target.value)} placeholder="Westfield SIS" {...describe("name")} />
              <FieldError id={`${ids}-name`} message={errs.name} />
            </label>
            {district ? (
              <div className={labelClass} data-testid="fixed-tenant">
                <span>Tenant</span>
                <span className="py-1.5 text-sm font-normal text-slate-900">
                  {district.name} <span className="font-mono text-xs text-slate-500">{district.id}</span>
                </span>
                <FieldError id={`${ids}-tenant`} message={errs.tenant} />
              </div>
            ) : (
              <label className={labelClass}>
                {/* Leaving it empty (every tenant's events) is an admin's choice, like *; anyone else names an existing district. */}
                <span>{canSubscribeAll ? "Tenant (empty: every tenant)" : "Tenant"}</span>
                <input
                  className={input}
                  value={tenant}
                  onChange={(e) => setTenant(e.target.value)}
                  list={`${ids}-tenants`}
                  placeholder="westfield"
                  {...describe("tenant")}
                />
                <datalist id={`${ids}-tenants`}>
                  {tenants.map((t) => (
                    <option key={t} value={t} />
                  ))}
                </datalist>
                <FieldError id={`${ids}-tenant`} message={errs.tenant} />
              </label>
            )}
            <label className={`${labelClass} sm:col-span-2`}>
              <span>Endpoint URL</span>
              <input
                className={input}
                value={url}
                onChange={(e) => setUrl(e.target.value)}
                inputMode="url"
                placeholder="https://sis.westfield.example/hooks"
                {...describe("url")}
              />
              <FieldError id={`${ids}-url`} message={errs.url} />
            </label>
            <fieldset className="sm:col-span-2" {...describe("eventTypes")}>
              <legend className="text-sm font-medium text-slate-800">Event types</legend>
              {eventTypes.length === 0 && !canSubscribeAll && <p className="text-sm text-slate-600">No events have been published yet: name the types below.</p>}
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
              <label className={`${labelClass} mt-2`}>
                <span>Other types, not published yet (comma-separated)</span>
                <input className={input} value={other} onChange={(e) => setOther(e.target.value)} placeholder="attendance.recorded" />
              </label>
              <FieldError id={`${ids}-eventTypes`} message={errs.eventTypes} />
            </fieldset>
            <label className={labelClass}>
              <span>Retry ladder, seconds between attempts</span>
              <input
                className={input}
                value={ladder}
                onChange={(e) => setLadder(e.target.value)}
                placeholder={DEFAULT_LADDER_SECONDS.join(", ")}
                {...describe("ladder")}
              />
              <span className="text-xs font-normal text-slate-600">Empty: the default, {DEFAULT_LADDER_SECONDS.map(waitText).join(" → ")}.</span>
              <FieldError id={`${ids}-ladder`} message={errs.ladder} />
            </label>
            <label className={labelClass}>
              <span>Attempt timeout, ms</span>
              <input
                className={input}
                inputMode="numeric"
                value={timeoutMs}
                onChange={(e) => setTimeoutMs(e.target.value)}
                placeholder={String(DEFAULT_TIMEOUT_MS)}
                {...describe("timeoutMs")}
              />
              <span className="text-xs font-normal text-slate-600">Empty: the default, {DEFAULT_TIMEOUT_MS.toLocaleString()} ms.</span>
              <FieldError id={`${ids}-timeoutMs`} message={errs.timeoutMs} />
            </label>
            <label className={labelClass}>
              <span>Rate limit, deliveries per second</span>
              <input className={input} inputMode="numeric" value={rate} onChange={(e) => setRate(e.target.value)} placeholder="none" {...describe("rate")} />
              <span className="text-xs font-normal text-slate-600">Empty: no limit.</span>
              <FieldError id={`${ids}-rate`} message={errs.rate} />
            </label>
            <label className={labelClass}>
              <span>Max concurrency, requests at once</span>
              <input
                className={input}
                inputMode="numeric"
                value={concurrency}
                onChange={(e) => setConcurrency(e.target.value)}
                placeholder={String(DEFAULT_MAX_CONCURRENCY)}
                {...describe("concurrency")}
              />
              <span className="text-xs font-normal text-slate-600">Empty: the default, {DEFAULT_MAX_CONCURRENCY}.</span>
              <FieldError id={`${ids}-concurrency`} message={errs.concurrency} />
            </label>
            {otherError && (
              <p role="alert" className="text-sm text-red-700 sm:col-span-2">
                {otherError}
              </p>
            )}
            <div className="flex flex-wrap gap-2 sm:col-span-2">
              <button type="submit" className={btnPrimary} disabled={busy}>
                {busy ? "Creating…" : "Create subscription"}
              </button>
              <button type="button" className={btn} onClick={onClose}>
                Cancel
              </button>
            </div>
          </form>
        )}
      </div>
    </div>
  );
}

"use client";
// What the endpoint is sent besides the signed body: extra request headers
// (a district gateway's bearer token or API key) and a client certificate for
// mutual TLS. Both are write-only: the page lists header names with masked
// values and the certificate's subject and expiry, and saving replaces what
// was there. Managers and up edit them.
import { LiveButton } from "@/components/ui/LiveButton";
import { SavedStatus, useInlineForm } from "@/components/ui/useInlineForm";
import { useState } from "react";
import { useQueryClient } from "@tanstack/react-query";
import { apiFetch, ApiError } from "@/lib/client/api";
import { usePolled } from "@/components/dashboard/usePolled";
import { formatTime, useTimeZone } from "@/components/ui/time";
import { Card, ErrorState, Skeleton, btn, btnDanger, input, label as labelClass } from "@/components/ui/kit";
import { FormActions, FormAlert } from "@/components/ui/form";

type TlsView = { set: false } | { set: true; subject: string | null; issuer: string | null; expiresAt: string | null; fingerprint256: string | null; ca: boolean };
type SubRead = { id: string; headers: Record<string, string> | null; tls: TlsView };
type Row = { name: string; value: string };

function message(err: unknown): string {
  if (!(err instanceof ApiError)) return "The request failed; nothing was saved. Check the connection and try again.";
  const details = Array.isArray(err.details) ? (err.details as { path?: string; message?: string }[]) : [];
  const lines = details.map((d) => d.message).filter(Boolean);
  return lines.length > 0 ? lines.join("; ") : err.message;
}

type FormProps = { path: string; onDone: () => void; onCancel: () => void };

/** A form's PATCH of the subscription: busy while it runs, the API's message if it refuses, `onDone` when saved. */
function usePatch({ path, onDone }: FormProps) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  async function patch(e: React.FormEvent, body: () => Record<string, unknown>) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await apiFetch(path, { method: "PATCH", body: body() });
      onDone();
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(false);
    }
  }
  return { busy, error, patch };
}

function HeadersForm(props: FormProps) {
  const [rows, setRows] = useState<Row[]>([{ name: "Authorization", value: "" }]);
  const { busy, error, patch } = usePatch(props);
  const set = (i: number, p: Partial<Row>) => setRows((rs) => rs.map((r, j) => (j === i ? { ...r, ...p } : r)));
  const submit = (e: React.FormEvent) =>
    patch(e, () => {
      const filled = rows.filter((r) => r.name.trim() || r.value);
      return { headers: filled.length ? Object.fromEntries(filled.map((r) => [r.name.trim(), r.value])) : null };
    });
  return (
    <form onSubmit={submit} aria-label="Endpoint headers" className="mt-3 flex flex-col gap-3 rounded-md border border-slate-200 p-3">
      <p className="text-sm text-slate-700">
        Saving replaces every endpoint header. Values are stored encrypted and never shown again. Host, Content-Length, hop-by-hop and webhook-* headers cannot be set.
      </p>
      {rows.map((r, i) => (
        <div key={i} className="flex flex-col gap-2 sm:flex-row sm:items-end">
          <label className={`${labelClass} sm:w-56`}>
            <span>Header name</span>
            {/* The button that opened the form is gone: focus starts on the first field. */}
            <input
              className={input}
              value={r.name}
              onChange={(e) => set(i, { name: e.target.value })}
              placeholder="X-District-Key"
              autoComplete="off"
              autoFocus={i === 0}
            />
          </label>
          <label className={`${labelClass} min-w-0 flex-1`}>
            <span>Value</span>
            <input
              className={input}
              type="password"
              value={r.value}
              onChange={(e) => set(i, { value: e.target.value })}
              placeholder="Bearer …"
              autoComplete="new-password"
            />
          </label>
          <button type="button" className={btn} onClick={() => setRows((rs) => rs.filter((_, j) => j !== i))} aria-label={`Remove header ${r.name || i + 1}`}>
            Remove
          </button>
        </div>
      ))}
      <FormAlert>{error}</FormAlert>
      <FormActions busy={busy} submitLabel="Save headers" onCancel={props.onCancel}>
        <button type="button" className={btn} onClick={() => setRows((rs) => [...rs, { name: "", value: "" }])} disabled={rows.length >= 20}>
          Add header
        </button>
      </FormActions>
    </form>
  );
}

function TlsForm(props: FormProps) {
  const [cert, setCert] = useState("");
  const [key, setKey] = useState("");
  const [ca, setCa] = useState("");
  const { busy, error, patch } = usePatch(props);
  // A CA alone (no certificate or key typed) trusts a private CA for an endpoint that asks for no client certificate.
  const pair = cert.trim() || key.trim() ? { clientCertificate: cert, clientKey: key } : {};
  const submit = (e: React.FormEvent) => patch(e, () => ({ tls: { ...pair, ...(ca.trim() ? { ca } : {}) } }));
  const area = `${input} h-28 font-mono text-xs`;
  return (
    <form onSubmit={submit} aria-label="Client certificate" className="mt-3 flex flex-col gap-3 rounded-md border border-slate-200 p-3">
      <label className={labelClass}>
        <span>Client certificate (PEM; leave empty with the key to trust a CA only)</span>
        <textarea className={area} value={cert} onChange={(e) => setCert(e.target.value)} placeholder="-----BEGIN CERTIFICATE-----" spellCheck={false} autoFocus />
      </label>
      <label className={labelClass}>
        <span>Private key (PEM, unencrypted; stored encrypted)</span>
        <textarea className={area} value={key} onChange={(e) => setKey(e.target.value)} placeholder="-----BEGIN PRIVATE KEY-----" spellCheck={false} />
      </label>
      <label className={labelClass}>
        <span>CA bundle to trust for this endpoint (PEM; optional with a certificate)</span>
        <textarea className={area} value={ca} onChange={(e) => setCa(e.target.value)} placeholder="-----BEGIN CERTIFICATE-----" spellCheck={false} />
      </label>
      <FormAlert>{error}</FormAlert>
      <FormActions busy={busy} submitLabel="Save certificate" onCancel={props.onCancel} />
    </form>
  );
}

export function EndpointAuth({ subscriptionId, canEdit }: { subscriptionId: string; canEdit: boolean }) {
  const tz = useTimeZone();
  const qc = useQueryClient();
  const path = `/api/v1/subscriptions/${encodeURIComponent(subscriptionId)}`;
  const res = usePolled<SubRead>(path, { intervalMs: 60_000 });
  const form = useInlineForm<"headers" | "tls">();
  const editing = form.open;
  const [error, setError] = useState<string | null>(null);
  const refresh = () => qc.invalidateQueries({ queryKey: [path] });
  const done = (status: string) => {
    form.close(status);
    void refresh();
  };
  async function clear(field: "headers" | "tls") {
    setError(null);
    try {
      await apiFetch(path, { method: "PATCH", body: { [field]: null } });
      // The Remove button goes with what it removed: focus moves to the button that adds one again.
      form.close(field === "headers" ? "Removed every endpoint header." : "Removed the client certificate and CA bundle.", field);
      await refresh();
    } catch (err) {
      setError(message(err));
    }
  }
  const headers = res.data?.headers ? Object.entries(res.data.headers) : [];
  const tls = res.data?.tls;
  return (
    <Card title="Endpoint authentication" id="endpoint-auth">
      {res.isPending && <Skeleton lines={2} />}
      {res.isError && !res.data && <ErrorState error={res.error} retry={() => res.refetch()} />}
      {res.data && (
        <div className="grid gap-4 md:grid-cols-2">
          <div className="min-w-0">
            <h3 className="text-sm font-semibold text-slate-900">Headers</h3>
            {headers.length === 0 ? (
              <p className="text-sm text-slate-600">None: requests carry only the signature headers.</p>
            ) : (
              <dl className="mt-1 space-y-1 text-sm" data-testid="endpoint-headers">
                {headers.map(([name, masked]) => (
                  <div key={name} className="flex min-w-0 gap-2">
                    <dt className="font-mono text-xs text-slate-800">{name}:</dt>
                    <dd className="truncate font-mono text-xs text-slate-600">{masked}</dd>
                  </div>
                ))}
              </dl>
            )}
            {canEdit && editing !== "headers" && (
              <div className="mt-2 flex flex-wrap gap-2">
                <LiveButton ref={form.opener("headers")} type="button" className={btn} onClick={() => form.start("headers")}>
                  {headers.length ? "Replace headers…" : "Add headers…"}
                </LiveButton>
                {headers.length > 0 && (
                  <LiveButton type="button" className={btnDanger} onClick={() => clear("headers")}>
                    Remove all headers
                  </LiveButton>
                )}
              </div>
            )}
            {editing === "headers" && <HeadersForm path={path} onDone={() => done("Saved: the endpoint headers.")} onCancel={() => form.close()} />}
          </div>
          <div className="min-w-0">
            <h3 className="text-sm font-semibold text-slate-900">Client certificate (mutual TLS) and CA</h3>
            {tls?.set && tls.subject === null ? (
              <p className="text-sm text-slate-700" data-testid="endpoint-tls">
                No client certificate; trusts its own CA bundle.
              </p>
            ) : tls?.set ? (
              <p className="text-sm text-slate-700" data-testid="endpoint-tls">
                <span className="break-words">{tls.subject}</span>, issued by <span className="break-words">{tls.issuer}</span>; expires {formatTime(tls.expiresAt!, tz)}
                {tls.ca ? "; trusts its own CA bundle" : ""}.
              </p>
            ) : (
              <p className="text-sm text-slate-600">None.</p>
            )}
            {canEdit && editing !== "tls" && (
              <div className="mt-2 flex flex-wrap gap-2">
                <LiveButton ref={form.opener("tls")} type="button" className={btn} onClick={() => form.start("tls")}>
                  {tls?.set ? "Replace certificate…" : "Add certificate…"}
                </LiveButton>
                {tls?.set && (
                  <LiveButton type="button" className={btnDanger} onClick={() => clear("tls")}>
                    Remove certificate
                  </LiveButton>
                )}
              </div>
            )}
            {editing === "tls" && <TlsForm path={path} onDone={() => done("Saved: the certificate and CA settings.")} onCancel={() => form.close()} />}
          </div>
        </div>
      )}
      <SavedStatus className="mt-2">{form.status}</SavedStatus>
      <FormAlert className="mt-2">{error}</FormAlert>
    </Card>
  );
}

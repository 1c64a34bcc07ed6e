"use client";
// The subscription's signing secrets as the API lists them (ids and validity
// windows, never values), "Rotate signing secret" with the overlap during
// which the old secret keeps signing too (default 1 day), the new secret shown
// once, and, for admins, ending an overlap early.
import { useState } from "react";
import { useQueryClient } from "@tanstack/react-query";
import { apiFetch, ApiError } from "@/lib/client/api";
import { usePolled } from "@/components/dashboard/usePolled";
import { formatTime, useTimeZone } from "@/components/ui/time";
import { LiveButton } from "@/components/ui/LiveButton";
import { Card, ErrorState, Skeleton, btn, btnDanger, input } from "@/components/ui/kit";
import { Field, FormActions, FormAlert, OptionSelect } from "@/components/ui/form";
import { SecretOnce } from "./SecretOnce";
import { useViewerTenant } from "@/components/dashboard/ViewerTenant";
import { errorsByField } from "./fields";

type SecretMeta = { id: string; createdAt: string; expiresAt: string | null; active: boolean };
/** The overlap choices; 1 day is the API's default (lib/subscriptions/rotation.ts). */
const OVERLAPS: { value: number; label: string }[] = [
  { value: 3600, label: "1 hour" },
  { value: 86400, label: "1 day" },
  { value: 3 * 86400, label: "3 days" },
  { value: 7 * 86400, label: "7 days" },
  { value: 0, label: "none: the old secret stops at once" },
];

function RotateForm({ subscriptionId, onDone, onCancel }: { subscriptionId: string; onDone: (secret: string) => void; onCancel: () => void }) {
  const district = useViewerTenant();
  const [overlap, setOverlap] = useState(86400);
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const { fields, other } = errorsByField(error, { overlap: ["body.overlapSeconds"], reason: ["body.reason"] });
  async function submit(e: React.FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const r = await apiFetch<{ secret: string }>(`/api/v1/subscriptions/${encodeURIComponent(subscriptionId)}/secrets`, {
        body: { overlapSeconds: overlap, ...(reason.trim() ? { reason: reason.trim() } : {}) },
      });
      onDone(r.secret);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return (
    <form onSubmit={submit} className="mt-3 flex max-w-xl flex-col gap-3 rounded-md border border-slate-200 p-3" aria-label="Rotate signing secret">
      <p className="text-sm text-slate-700">
        A new secret signs every delivery from now on. During the overlap the old one signs too (each request carries both signatures), so{" "}
        {district ? "your endpoint can switch to the new one at your own pace" : "the district can switch at its own pace"}.
      </p>
      <Field label="Overlap: the old secret keeps signing for" errorId="rotate-overlap-error" error={fields.overlap}>
        <OptionSelect options={OVERLAPS} value={overlap} onChange={(e) => setOverlap(Number(e.target.value))} />
      </Field>
      <Field label="Reason (optional, kept in the audit log)" errorId="rotate-reason-error" error={fields.reason}>
        <input className={input} value={reason} maxLength={500} onChange={(e) => setReason(e.target.value)} placeholder="yearly key rotation" />
      </Field>
      <FormAlert>{other}</FormAlert>
      <FormActions busy={busy} busyLabel="Rotating…" submitLabel="Rotate now" onCancel={onCancel} />
    </form>
  );
}

export function SigningSecrets({ subscriptionId, canRotate, canExpire }: { subscriptionId: string; canRotate: boolean; canExpire: boolean }) {
  const tz = useTimeZone();
  const qc = useQueryClient();
  const path = `/api/v1/subscriptions/${encodeURIComponent(subscriptionId)}/secrets`;
  const res = usePolled<{ items: SecretMeta[] }>(path, { intervalMs: 30_000 });
  const [rotating, setRotating] = useState(false);
  const [shown, setShown] = useState<string | null>(null);
  const [ending, setEnding] = useState<string | null>(null);
  const [endError, setEndError] = useState<string | null>(null);
  const refresh = () => qc.invalidateQueries({ queryKey: [path] });
  const items = res.data?.items ?? [];
  const newest = items[0]?.id;

  async function endNow(id: string) {
    setEndError(null);
    try {
      await apiFetch(`${path}/${encodeURIComponent(id)}`, { method: "DELETE" });
      setEnding(null);
      await refresh();
    } catch (err) {
      setEndError(err instanceof ApiError ? err.message : "Ending the overlap failed; nothing changed. Try again.");
    }
  }

  return (
    <Card
      title="Signing secrets"
      id="secrets"
      actions={
        canRotate && !rotating && !shown ? (
          <LiveButton type="button" className={btn} onClick={() => setRotating(true)}>
            Rotate signing secret…
          </LiveButton>
        ) : null
      }
    >
      {shown && (
        <div className="mb-3 space-y-2">
          <SecretOnce secret={shown} note="The previous secret keeps signing until the end of the overlap listed below." />
          <button type="button" className={btn} onClick={() => setShown(null)}>
            I have stored it
          </button>
        </div>
      )}
      {rotating && (
        <RotateForm
          subscriptionId={subscriptionId}
          onCancel={() => setRotating(false)}
          onDone={(secret) => {
            setRotating(false);
            setShown(secret);
            refresh();
          }}
        />
      )}
      {res.isPending && <Skeleton lines={2} />}
      {res.isError && !res.data && <ErrorState error={res.error} retry={() => res.refetch()} />}
      {items.length > 0 && (
        <ul className="mt-2 divide-y divide-slate-100 text-sm" data-testid="secrets-list">
          {items.map((s) => (
            <li key={s.id} className="flex flex-col gap-1 py-2 sm:flex-row sm:items-center sm:justify-between">
              <div className="min-w-0">
                <span className="font-mono text-xs text-slate-700">{s.id}</span>{" "}
                <span className={s.active ? "font-medium text-emerald-800" : "text-slate-500"}>
                  {!s.active ? "stopped" : s.id === newest ? "signing" : "signing during the overlap"}
                </span>
                <p className="text-xs text-slate-600">
                  created {formatTime(s.createdAt, tz)} · {s.expiresAt ? `${s.active ? "expires" : "expired"} ${formatTime(s.expiresAt, tz)}` : "no expiry"}
                </p>
              </div>
              {canExpire && s.active && s.id !== newest && (
                <div className="flex shrink-0 flex-wrap items-center gap-2">
                  {ending === s.id ? (
                    <>
                      <span className="text-xs text-slate-700">Receivers still on it fail verification.</span>
                      <button type="button" className={`${btnDanger} px-2 py-1 text-xs`} onClick={() => endNow(s.id)}>
                        End it now
                      </button>
                      <button type="button" className={`${btn} px-2 py-1 text-xs`} onClick={() => setEnding(null)}>
                        Keep
                      </button>
                    </>
                  ) : (
                    <LiveButton type="button" className={`${btn} px-2 py-1 text-xs`} onClick={() => setEnding(s.id)}>
                      End overlap now…
                    </LiveButton>
                  )}
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
      <FormAlert className="mt-2">{endError}</FormAlert>
      <p className="mt-2 text-xs text-slate-600">Secrets are never shown again after they are created; only their ids and validity windows are listed.</p>
    </Card>
  );
}

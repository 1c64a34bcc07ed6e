"use client";
import { useId, useState, useTransition } from "react";
import { btnPrimary as button, card, input } from "@/components/ui/kit";
import { BusySubmit, LiveButton, LiveFieldset } from "@/components/ui/LiveButton";
import { SavedStatus } from "@/components/ui/useInlineForm";
import {
  createTenantAction,
  createTokenAction,
  createUserAction,
  revokeTokenAction,
  setDefaultDlqThresholdAction,
  setUserDisabledAction,
  type ActionResult,
} from "./actions";
import { num } from "@/lib/words";
import { TenantPicker } from "@/components/ui/TenantPicker";
import { DLQ_THRESHOLD_FIELD } from "@/lib/notify/limits";

/**
 * Which district an account or token is confined to, typed (with suggestions): any existing tenant id, however many
 * there are. Empty is global: it sees and acts on every district, so it is the choice to make on purpose.
 */
function TenantField() {
  return <TenantPicker name="tenantId" label="Tenant (empty: global, every district)" placeholder="Global, or a tenant id" />;
}

function OneTime({ label, value }: { label: string; value: string }) {
  return (
    <div className="mt-3 rounded-md border border-emerald-300 bg-emerald-50 p-3 text-sm text-emerald-900">
      <p className="font-medium">{label} It is shown only now.</p>
      <code className="mt-1 block break-all rounded bg-white px-2 py-1 font-mono text-xs text-slate-900">{value}</code>
      <button type="button" className="mt-2 text-xs text-emerald-800 underline" onClick={() => navigator.clipboard?.writeText(value)}>
        Copy
      </button>
    </div>
  );
}

/**
 * An admin's "add one" form: its fields (children) in a row, the submit
 * button, then the action's refusal or `shown(what was created)`. The server
 * action gets the form's fields; a refused one keeps what was typed.
 */
function CreateForm<T>({
  title,
  submitLabel,
  create,
  shown,
  resetOnSuccess = false,
  children,
}: {
  title: string;
  submitLabel: string;
  create: (f: FormData) => Promise<ActionResult<T>>;
  shown: (created: T) => React.ReactNode;
  resetOnSuccess?: boolean;
  children: React.ReactNode;
}) {
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<T | null>(null);
  return (
    <form
      className={`${card} mt-4`}
      aria-label={title}
      onSubmit={(e) => {
        e.preventDefault();
        const form = e.currentTarget;
        const f = new FormData(form);
        start(async () => {
          setError(null);
          setCreated(null);
          const r = await create(f);
          if (r.ok && r.value) {
            setCreated(r.value);
            if (resetOnSuccess) form.reset();
          } else if (!r.ok) setError(r.error);
        });
      }}
    >
      <h2 className="text-base font-semibold">{title}</h2>
      <LiveFieldset className="mt-2 flex min-w-0 flex-wrap items-end gap-2">
        {children}
        <BusySubmit busy={pending} className={button}>
          {submitLabel}
        </BusySubmit>
      </LiveFieldset>
      {error ? (
        <p role="alert" className="mt-2 text-sm text-red-700">
          {error}
        </p>
      ) : null}
      <SavedStatus>{created ? shown(created) : null}</SavedStatus>
    </form>
  );
}

function RoleSelect({ roles, defaultValue }: { roles: readonly string[]; defaultValue: string }) {
  return (
    <label className="text-sm">
      <span className="block text-slate-600">Role</span>
      <select name="role" className={input} defaultValue={defaultValue}>
        {roles.map((r) => (
          <option key={r}>{r}</option>
        ))}
      </select>
    </label>
  );
}

const text = (f: FormData, name: string) => String(f.get(name) ?? "");

/** Global admins only (the page refuses a district's admin), so a global account can be made. */
export function CreateUserForm({ roles }: { roles: readonly string[] }) {
  return (
    <CreateForm
      title="Add a user"
      submitLabel="Create user"
      create={(f) => createUserAction({ email: text(f, "email"), role: text(f, "role"), tenantId: text(f, "tenantId") })}
      shown={(u) => <OneTime label={`One-time password for ${u.email}.`} value={u.password} />}
    >
      <label className="text-sm">
        <span className="block text-slate-600">Email</span>
        <input name="email" type="email" required className={input} />
      </label>
      <RoleSelect roles={roles} defaultValue="support" />
      <TenantField />
    </CreateForm>
  );
}

export function UserDisableButton({ id, disabled }: { id: string; disabled: boolean }) {
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  return (
    <span>
      <LiveButton
        type="button"
        disabled={pending}
        className="text-sm text-blue-700 hover:underline disabled:opacity-60"
        onClick={() =>
          start(async () => {
            const r = await setUserDisabledAction(id, !disabled);
            setError(r.ok ? null : r.error);
          })
        }
      >
        {disabled ? "Enable" : "Disable"}
      </LiveButton>
      {error ? (
        <span role="alert" className="ml-2 text-xs text-red-700">
          {error}
        </span>
      ) : null}
    </span>
  );
}

/** Global admins only (the page refuses a district's admin), so a global account can be made. */
export function CreateTokenForm({ roles }: { roles: readonly string[] }) {
  return (
    <CreateForm
      title="Create an API token"
      submitLabel="Create token"
      create={(f) => createTokenAction({ role: text(f, "role"), name: text(f, "name") || undefined, tenantId: text(f, "tenantId") })}
      shown={(t) => <OneTime label={`Token "${t.name}".`} value={t.token} />}
    >
      <label className="text-sm">
        <span className="block text-slate-600">Name (shown in audit rows)</span>
        <input name="name" className={input} placeholder="sis-publisher" />
      </label>
      <RoleSelect roles={roles} defaultValue="producer" />
      <TenantField />
    </CreateForm>
  );
}

export function RevokeTokenButton({ id, name }: { id: string; name: string }) {
  const [pending, start] = useTransition();
  return (
    <LiveButton
      type="button"
      disabled={pending}
      className="text-sm text-red-700 hover:underline disabled:opacity-60"
      onClick={() => {
        if (!window.confirm(`Revoke token "${name}"? Calls with it will answer 401 at once.`)) return;
        start(async () => {
          await revokeTokenAction(id);
        });
      }}
    >
      Revoke
    </LiveButton>
  );
}

export function CreateTenantForm() {
  return (
    <CreateForm
      title="Add a tenant"
      submitLabel="Create tenant"
      resetOnSuccess
      create={(f) => createTenantAction({ id: text(f, "id"), name: text(f, "name") })}
      shown={(t) => (
        <p className="mt-2">
          Created {t.name} ({t.id}). Give its people accounts on the Users page with this tenant.
        </p>
      )}
    >
      <label className="text-sm">
        <span className="block text-slate-600">Id (what producers send as subject.tenant)</span>
        <input name="id" required className={input} placeholder="lincoln" autoComplete="off" spellCheck={false} />
      </label>
      <label className="text-sm">
        <span className="block text-slate-600">Name</span>
        <input name="name" required className={input} placeholder="Lincoln USD" />
      </label>
    </CreateForm>
  );
}

/** The operator's dead-letter threshold: what every district without its own is told at (lib/notify/settings.ts). */
export function DefaultDlqThresholdForm({ value }: { value: number }) {
  const id = useId();
  const [pending, start] = useTransition();
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  return (
    <form
      className="flex flex-wrap items-end gap-2 text-sm"
      aria-label="Default dead-letter threshold"
      onSubmit={(e) => {
        e.preventDefault();
        const f = new FormData(e.currentTarget);
        start(async () => {
          setMessage(null);
          const r = await setDefaultDlqThresholdAction({ dlqThreshold: String(f.get("dlqThreshold") ?? "") });
          setMessage(r.ok ? { ok: true, text: `Saved: districts without their own are told at ${num(r.value!.dlqThreshold)}.` } : { ok: false, text: r.error });
        });
      }}
    >
      <LiveFieldset className="flex min-w-0 flex-col gap-1">
        <label htmlFor={id} className="font-medium text-slate-800">
          Default dead-letter threshold
        </label>
        <span className="text-xs text-slate-600">Dead letters of one endpoint before its district is told, unless the district set its own.</span>
        <div className="flex flex-wrap items-center gap-2">
          <input id={id} {...DLQ_THRESHOLD_FIELD} required defaultValue={value} className={`${input} w-40`} />
          <BusySubmit busy={pending} className={button}>
            {pending ? "Saving…" : "Save default"}
          </BusySubmit>
        </div>
      </LiveFieldset>
      <SavedStatus className="w-full">{message?.ok ? message.text : null}</SavedStatus>
      {message && !message.ok && (
        <p role="alert" className="w-full text-sm text-red-700">
          {message.text}
        </p>
      )}
    </form>
  );
}

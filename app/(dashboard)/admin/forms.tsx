"use client";
import { useState, useTransition } from "react";
import { createTokenAction, createUserAction, revokeTokenAction, setUserDisabledAction } from "./actions";

const input = "rounded-md border border-slate-300 px-2 py-1.5 text-sm";
const button = "rounded-md bg-slate-900 px-3 py-1.5 text-sm font-medium text-white hover:bg-slate-700 disabled:opacity-60";

function OneTime({ label, value }: { label: string; value: string }) {
  return (
    <div role="status" className="mt-3 rounded-md border border-emerald-300 bg-emerald-50 p-3 text-sm text-emerald-900">
      <p className="font-medium">{label} It is shown only now.</p>
      <code className="mt-1 block break-all rounded bg-white px-2 py-1 font-mono text-xs text-slate-900">{value}</code>
      <button type="button" className="mt-2 text-xs text-emerald-800 underline" onClick={() => navigator.clipboard?.writeText(value)}>
        Copy
      </button>
    </div>
  );
}

export function CreateUserForm({ roles }: { roles: readonly string[] }) {
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<{ email: string; password: string } | null>(null);
  return (
    <form
      className="mt-4 rounded-lg border border-slate-200 bg-white p-4"
      onSubmit={(e) => {
        e.preventDefault();
        const f = new FormData(e.currentTarget);
        start(async () => {
          setError(null);
          setCreated(null);
          const r = await createUserAction({ email: String(f.get("email")), role: String(f.get("role")) });
          if (r.ok && r.value) setCreated(r.value);
          else if (!r.ok) setError(r.error);
        });
      }}
    >
      <h2 className="text-base font-semibold">Add a user</h2>
      <div className="mt-2 flex flex-wrap items-end gap-2">
        <label className="text-sm">
          <span className="block text-slate-600">Email</span>
          <input name="email" type="email" required className={input} />
        </label>
        <label className="text-sm">
          <span className="block text-slate-600">Role</span>
          <select name="role" className={input} defaultValue="support">
            {roles.map((r) => (
              <option key={r}>{r}</option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={pending} className={button}>
          Create user
        </button>
      </div>
      {error ? <p role="alert" className="mt-2 text-sm text-red-700">{error}</p> : null}
      {created ? <OneTime label={`One-time password for ${created.email}.`} value={created.password} /> : null}
    </form>
  );
}

export function UserDisableButton({ id, disabled }: { id: string; disabled: boolean }) {
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  return (
    <span>
      <button
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
      </button>
      {error ? <span role="alert" className="ml-2 text-xs text-red-700">{error}</span> : null}
    </span>
  );
}

export function CreateTokenForm({ roles }: { roles: readonly string[] }) {
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<{ name: string; token: string } | null>(null);
  return (
    <form
      className="mt-4 rounded-lg border border-slate-200 bg-white p-4"
      onSubmit={(e) => {
        e.preventDefault();
        const f = new FormData(e.currentTarget);
        start(async () => {
          setError(null);
          setCreated(null);
          const r = await createTokenAction({ role: String(f.get("role")), name: String(f.get("name") ?? "") || undefined });
          if (r.ok && r.value) setCreated(r.value);
          else if (!r.ok) setError(r.error);
        });
      }}
    >
      <h2 className="text-base font-semibold">Create an API token</h2>
      <div className="mt-2 flex flex-wrap items-end gap-2">
        <label className="text-sm">
          <span className="block text-slate-600">Name (shown in audit rows)</span>
          <input name="name" className={input} placeholder="sis-publisher" />
        </label>
        <label className="text-sm">
          <span className="block text-slate-600">Role</span>
          <select name="role" className={input} defaultValue="producer">
            {roles.map((r) => (
              <option key={r}>{r}</option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={pending} className={button}>
          Create token
        </button>
      </div>
      {error ? <p role="alert" className="mt-2 text-sm text-red-700">{error}</p> : null}
      {created ? <OneTime label={`Token "${created.name}".`} value={created.token} /> : null}
    </form>
  );
}

export function RevokeTokenButton({ id, name }: { id: string; name: string }) {
  const [pending, start] = useTransition();
  return (
    <button
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
    </button>
  );
}

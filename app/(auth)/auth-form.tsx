"use client";
// The sign-in and password forms' common part: the card, the labelled fields,
// the error line and the submit button that says what is happening. `submit`
// gets the form's fields and answers where to go next (a full navigation, so
// every server component renders for the new session) or the message to show.
import { useState } from "react";
import { ApiError } from "@/lib/client/api";

type Outcome = { next: string } | { error: string };

export function AuthForm({
  submit,
  submitLabel,
  pendingLabel,
  noScriptAction,
  children,
}: {
  submit: (form: FormData) => Promise<Outcome>;
  submitLabel: string;
  pendingLabel: string;
  /** Where the form posts without JavaScript (urlencoded; the server redirects). */
  noScriptAction?: string;
  children: React.ReactNode;
}) {
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);

  async function onSubmit(e: React.FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    setPending(true);
    setError(null);
    try {
      const out = await submit(form);
      if ("next" in out) return window.location.assign(out.next);
      setError(out.error);
    } catch (err) {
      setError(err instanceof ApiError ? err.message : "The server did not answer; check that hookledger is running.");
    }
    setPending(false);
  }

  return (
    <form
      method={noScriptAction ? "post" : undefined}
      action={noScriptAction}
      onSubmit={onSubmit}
      className="mt-6 space-y-4 rounded-lg border border-slate-200 bg-white p-5 shadow-sm"
    >
      {children}
      {error ? (
        <p role="alert" className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-800">
          {error}
        </p>
      ) : null}
      <button type="submit" disabled={pending} className="w-full rounded-md bg-slate-900 px-3 py-2 text-sm font-medium text-white hover:bg-slate-700 disabled:opacity-60">
        {pending ? pendingLabel : submitLabel}
      </button>
    </form>
  );
}

/** A labelled input of an auth form; its name and id are the same. */
export function AuthField({ name, label, ...props }: { name: string; label: string } & React.InputHTMLAttributes<HTMLInputElement>) {
  return (
    <div>
      <label htmlFor={name} className="block text-sm font-medium text-slate-700">
        {label}
      </label>
      <input
        id={name}
        name={name}
        required
        className="mt-1 w-full rounded-md border border-slate-300 px-3 py-2 text-sm focus:border-blue-600 focus:outline-none focus:ring-1 focus:ring-blue-600"
        {...props}
      />
    </div>
  );
}

"use client";
import { useState } from "react";
import { apiFetch, ApiError } from "@/lib/client/api";

/** Posts to /api/auth/password (session cookie + CSRF header); on success the server has set a new session cookie. */
export function PasswordForm({ next }: { next: string }) {
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);

  async function onSubmit(e: React.FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    if (form.get("newPassword") !== form.get("confirmPassword")) {
      setError("The two new passwords differ.");
      return;
    }
    setPending(true);
    setError(null);
    try {
      const body = await apiFetch<{ next: string }>("/api/auth/password", {
        method: "POST",
        body: { currentPassword: form.get("currentPassword"), newPassword: form.get("newPassword"), next },
      });
      window.location.assign(body.next ?? next);
    } catch (err) {
      setError(err instanceof ApiError ? err.message : "The server did not answer; check that hookledger is running.");
      setPending(false);
    }
  }

  const input = "mt-1 w-full rounded-md border border-slate-300 px-3 py-2 text-sm focus:border-blue-600 focus:outline-none focus:ring-1 focus:ring-blue-600";
  return (
    <form onSubmit={onSubmit} className="mt-6 space-y-4 rounded-lg border border-slate-200 bg-white p-5 shadow-sm">
      <div>
        <label htmlFor="currentPassword" className="block text-sm font-medium text-slate-700">
          Current password
        </label>
        <input id="currentPassword" name="currentPassword" type="password" autoComplete="current-password" required className={input} />
      </div>
      <div>
        <label htmlFor="newPassword" className="block text-sm font-medium text-slate-700">
          New password
        </label>
        <input id="newPassword" name="newPassword" type="password" autoComplete="new-password" minLength={12} required className={input} />
      </div>
      <div>
        <label htmlFor="confirmPassword" className="block text-sm font-medium text-slate-700">
          New password again
        </label>
        <input id="confirmPassword" name="confirmPassword" type="password" autoComplete="new-password" minLength={12} required className={input} />
      </div>
      {error ? (
        <p role="alert" className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-800">
          {error}
        </p>
      ) : null}
      <button type="submit" disabled={pending} className="w-full rounded-md bg-slate-900 px-3 py-2 text-sm font-medium text-white hover:bg-slate-700 disabled:opacity-60">
        {pending ? "Saving…" : "Change password"}
      </button>
    </form>
  );
}

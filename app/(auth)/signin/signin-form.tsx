"use client";
import { AuthField, AuthForm } from "../auth-form";

/** Posts JSON to /api/auth/signin; without JavaScript the same form posts urlencoded and is redirected. */
export function SignInForm({ next }: { next: string }) {
  return (
    <AuthForm
      noScriptAction="/api/auth/signin"
      submitLabel="Sign in"
      pendingLabel="Signing in…"
      submit={async (form) => {
        const res = await fetch("/api/auth/signin", {
          method: "POST",
          credentials: "same-origin",
          headers: { "content-type": "application/json", accept: "application/json" },
          body: JSON.stringify({ email: form.get("email"), password: form.get("password"), next }),
        });
        const body = await res.json().catch(() => null);
        if (!res.ok) return { error: body?.error?.message ?? `Sign-in failed (HTTP ${res.status}).` };
        return { next: body?.next ?? next };
      }}
    >
      <input type="hidden" name="next" value={next} />
      <AuthField name="email" label="Email" type="email" autoComplete="username" />
      <AuthField name="password" label="Password" type="password" autoComplete="current-password" />
    </AuthForm>
  );
}

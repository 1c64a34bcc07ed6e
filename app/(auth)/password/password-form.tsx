"use client";
import { apiFetch } from "@/lib/client/api";
import { AuthField, AuthForm } from "../auth-form";

/** Posts to /api/auth/password (session cookie + CSRF header); on success the server has set a new session cookie. */
export function PasswordForm({ next }: { next: string }) {
  return (
    <AuthForm
      submitLabel="Change password"
      pendingLabel="Saving…"
      submit={async (form) => {
        if (form.get("newPassword") !== form.get("confirmPassword")) return { error: "The two new passwords differ." };
        const body = await apiFetch<{ next: string }>("/api/auth/password", {
          method: "POST",
          body: { currentPassword: form.get("currentPassword"), newPassword: form.get("newPassword"), next },
        });
        return { next: body.next ?? next };
      }}
    >
      <AuthField name="currentPassword" label="Current password" type="password" autoComplete="current-password" />
      <AuthField name="newPassword" label="New password" type="password" autoComplete="new-password" minLength={12} />
      <AuthField name="confirmPassword" label="New password again" type="password" autoComplete="new-password" minLength={12} />
    </AuthForm>
  );
}

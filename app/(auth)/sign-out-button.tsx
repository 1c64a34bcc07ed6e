"use client";
// For the dashboard header: <SignOutButton /> (import from "@/app/(auth)/sign-out-button").
import { apiFetch } from "@/lib/client/api";

export function SignOutButton({ className }: { className?: string }) {
  return (
    <button
      type="button"
      className={className ?? "text-sm text-slate-600 hover:text-slate-900"}
      onClick={async () => {
        await apiFetch("/api/auth/signout", { method: "POST" }).catch(() => {});
        window.location.assign("/signin");
      }}
    >
      Sign out
    </button>
  );
}

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
        // A full load, not router.push: it drops the signed-out user's cached
        // queries and client state along with the page.
        // eslint-disable-next-line @next/next/no-location-assign-relative-destination
        window.location.assign("/signin");
      }}
    >
      Sign out
    </button>
  );
}

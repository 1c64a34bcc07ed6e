"use client";
// For the dashboard header: <SignOutButton /> (import from "@/app/(auth)/sign-out-button").
import { apiFetch } from "@/lib/client/api";
import { LiveButton } from "@/components/ui/LiveButton";

/** `to`: where the browser goes afterwards (a district portal goes to its own notice, which its frame may show). */
export function SignOutButton({ className, to = "/signin" }: { className?: string; to?: string }) {
  return (
    <LiveButton
      type="button"
      className={className ?? "text-sm text-slate-600 hover:text-slate-900"}
      onClick={async () => {
        await apiFetch("/api/auth/signout", { method: "POST" }).catch(() => {});
        // A full load, not router.push: it drops the signed-out user's cached
        // queries and client state along with the page.
        window.location.assign(to);
      }}
    >
      Sign out
    </LiveButton>
  );
}

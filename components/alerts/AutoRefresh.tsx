"use client";
// Re-evaluates the alert conditions every 15 s (a server re-render) while the
// tab is visible, and says when they were last evaluated.
import { useEffect } from "react";
import { useRouter } from "next/navigation";
import { Time } from "@/components/ui/time";

const ALERTS_REFRESH_MS = 15_000;

export function AutoRefresh({ evaluatedAt }: { evaluatedAt: string }) {
  const router = useRouter();
  useEffect(() => {
    const t = setInterval(() => {
      if (document.visibilityState === "visible") router.refresh();
    }, ALERTS_REFRESH_MS);
    return () => clearInterval(t);
  }, [router]);
  return (
    <p className="text-xs text-slate-600" aria-live="polite">
      Evaluated <Time iso={evaluatedAt} relative={false} />; refreshes every 15 s
    </p>
  );
}

"use client";
import { usePathname } from "next/navigation";
import type { Role } from "@/lib/auth/permissions";
import { whyRefused } from "./page-access";

/** The refused page's sentence, for the page the viewer asked for (only the browser's address names it). */
export function RefusedReason({ role, tenantId, tenantName, portal }: { role: Role; tenantId: string | null; tenantName: string | null; portal: boolean }) {
  const path = usePathname();
  return (
    <p className="max-w-2xl text-slate-700" data-testid="refused-reason">
      {whyRefused(path, { role, tenantId, tenantName, portal })}
    </p>
  );
}

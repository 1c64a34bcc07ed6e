"use client";
import Link from "next/link";
import { usePathname } from "next/navigation";
import { useViewerTenant } from "./ViewerTenant";

const NAV = [
  { href: "/", label: "Lookup" },
  { href: "/subscriptions", label: "Subscriptions" },
  { href: "/dlq", label: "Dead letters" },
  { href: "/redrives", label: "Redrives" },
  // The alert conditions are the whole system's (every district's queue and dead letters): not a district's page.
  { href: "/alerts", label: "Alerts", global: true },
  { href: "/audit", label: "Audit" },
];

export function NavLinks() {
  const path = usePathname();
  const scoped = useViewerTenant() !== null;
  return (
    <nav aria-label="Main" className="-mx-1 flex gap-1 overflow-x-auto text-sm">
      {NAV.filter((n) => !(scoped && "global" in n && n.global)).map((n) => {
        const active = n.href === "/" ? path === "/" || path.startsWith("/deliveries") : path.startsWith(n.href);
        return (
          <Link
            key={n.href}
            href={n.href}
            aria-current={active ? "page" : undefined}
            className={`whitespace-nowrap rounded-md px-2.5 py-1.5 font-medium focus:outline-none focus-visible:ring-2 focus-visible:ring-blue-600 ${
              active ? "bg-slate-900 text-white" : "text-slate-700 hover:bg-slate-100 hover:text-slate-900"
            }`}
          >
            {n.label}
          </Link>
        );
      })}
    </nav>
  );
}

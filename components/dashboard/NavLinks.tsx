"use client";
import Link from "next/link";
import { usePathname } from "next/navigation";

/**
 * The main navigation: the items the layout chose for the viewer's role (navFor, from the permission table). The
 * items wrap onto a second line on a narrow screen, so every one of them stays in sight.
 */
export function NavLinks({ items }: { items: { href: string; label: string; under?: string }[] }) {
  const path = usePathname();
  return (
    <nav aria-label="Main" className="-mx-1 flex flex-wrap gap-1 text-sm">
      {items.map((n) => {
        const active = (n.href === "/" ? path === "/" : path.startsWith(n.href)) || (n.under !== undefined && path.startsWith(n.under));
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

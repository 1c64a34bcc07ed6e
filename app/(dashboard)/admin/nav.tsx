import Link from "next/link";

const PAGES = [
  { href: "/admin/users", label: "Users" },
  { href: "/admin/tokens", label: "API tokens" },
  { href: "/admin/tenants", label: "Tenants", global: true },
  { href: "/admin/retention", label: "Retention", global: true },
];

/** The admin pages, linked to each other (they are not in the main navigation). Tenants are a global admin's only. */
export function AdminNav({ current, global }: { current: string; global: boolean }) {
  return (
    <nav aria-label="Admin" className="mb-4 flex flex-wrap gap-1 text-sm">
      {PAGES.filter((p) => global || !p.global).map((p) => (
        <Link
          key={p.href}
          href={p.href}
          aria-current={p.href === current ? "page" : undefined}
          className={`rounded-md px-2.5 py-1 font-medium ${p.href === current ? "bg-slate-200 text-slate-900" : "text-blue-700 hover:bg-slate-100"}`}
        >
          {p.label}
        </Link>
      ))}
    </nav>
  );
}

/** An account's or token's tenant in a table: its name and id, or "global" for one that is confined to none. */
export function TenantName({ id, names }: { id: string | null; names: Map<string, string> }) {
  if (!id) return "global";
  return (
    <>
      {names.get(id) ?? id} <span className="font-mono text-xs text-slate-500">{id}</span>
    </>
  );
}

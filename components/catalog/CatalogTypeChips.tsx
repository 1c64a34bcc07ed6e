"use client";
// The event catalog's types beside a subscription's free-text event types field: one button per catalogued type not
// in the field yet, which adds it. Free text still names any other type.
import { useQuery } from "@tanstack/react-query";
import { apiFetch } from "@/lib/client/api";
import { LiveButton } from "@/components/ui/LiveButton";

type Catalog = { items: { type: string; description: string; deprecated: boolean }[] };

export function CatalogTypeChips({ value, onChange }: { value: string; onChange: (v: string) => void }) {
  const catalog = useQuery({
    queryKey: ["/api/v1/event-types"],
    queryFn: ({ signal }) => apiFetch<Catalog>("/api/v1/event-types", { signal }),
    retry: false,
    staleTime: 60_000,
  });
  const present = new Set(value.split(/[\s,]+/).filter(Boolean));
  const offered = (catalog.data?.items ?? []).filter((t) => !t.deprecated && !present.has(t.type));
  if (offered.length === 0) return null;
  return (
    // A group, so that its name is read (a plain <div> may not be named): the buttons are what it names.
    <div role="group" className="flex flex-wrap items-center gap-1 sm:col-span-2" aria-label="Add a catalogued event type">
      <span className="text-xs text-slate-600">From the catalog:</span>
      {offered.map((t) => (
        <LiveButton
          key={t.type}
          type="button"
          title={t.description}
          className="rounded-full px-2 py-0.5 font-mono text-xs text-slate-800 ring-1 ring-slate-300 hover:bg-slate-100"
          onClick={() => onChange([...present, t.type].join(", "))}
        >
          + {t.type}
        </LiveButton>
      ))}
    </div>
  );
}

"use client";
// A tenant (district) chosen by typing its id: a text field whose suggestions are the tenants matching what is typed,
// asked of GET /api/v1/tenants a page at a time. A select holding every tenant is unusable at thousands and stops
// wherever the list is cut; here any existing id is accepted, and the server refuses an unknown one with a message.
// Suggestions need tenants.manage; a viewer without it still types the id (the field works, it just suggests nothing).
import { useId, useState } from "react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { apiFetch } from "@/lib/client/api";
import { input } from "@/components/ui/kit";
import { useTypedQuery } from "@/components/ui/useTypedQuery";

type TenantPage = { items: { id: string; name: string }[]; nextCursor: string | null };

/** How many suggestions one answer holds: enough to pick from, few enough to read. */
const SUGGESTIONS = 20;

/**
 * The tenants matching `text` (after a pause in typing). `ok` is whether the list answered at all (a 403 for a
 * viewer who may not list tenants); it stays true while the next answer is on its way.
 */
export function useTenantSuggestions(text: string, enabled = true) {
  const q = useTypedQuery(text);
  const answer = useQuery({
    queryKey: ["/api/v1/tenants", "suggest", q],
    queryFn: ({ signal }) => apiFetch<TenantPage>(`/api/v1/tenants?${new URLSearchParams({ limit: String(SUGGESTIONS), ...(q ? { q } : {}) })}`, { signal }),
    enabled,
    retry: false,
    staleTime: 60_000,
    placeholderData: keepPreviousData,
  });
  return { items: answer.data?.items ?? [], ok: answer.isSuccess };
}

/**
 * Tenant ids to suggest for `text`: the tenants table's matches where the viewer may list tenants (an admin: every
 * tenant, a new one without subscriptions too), else `fallback` (what the page was given).
 */
export function useTenantIds(text: string, fallback: string[], enabled = true): { ids: string[]; live: boolean } {
  const live = useTenantSuggestions(text, enabled);
  return live.ok ? { ids: live.items.map((t) => t.id), live: true } : { ids: fallback, live: false };
}

/** The text field and its suggestions, controlled: for a form that keeps its values in state. */
export function TenantInput({
  value,
  onChange,
  suggestions,
  placeholder,
  ...rest
}: {
  value: string;
  onChange: (v: string) => void;
  suggestions: { id: string; name: string }[];
  placeholder?: string;
  name?: string;
  "aria-invalid"?: boolean;
  "aria-describedby"?: string;
}) {
  const listId = useId();
  return (
    <>
      <input
        {...rest}
        className={`${input} max-w-full`}
        list={listId}
        value={value}
        maxLength={100}
        autoComplete="off"
        spellCheck={false}
        placeholder={placeholder}
        onChange={(e) => onChange(e.target.value)}
      />
      <datalist id={listId} data-testid="tenant-suggestions">
        {suggestions.map((t) => (
          // The name as the option's label attribute, not its text: text inside the field's label would join its name.
          <option key={t.id} value={t.id} label={t.name} />
        ))}
      </datalist>
    </>
  );
}

/** A labelled tenant field for a plain form (its value is read from the form data as `name`). */
export function TenantPicker({ name, label, defaultValue = "", placeholder }: { name: string; label: React.ReactNode; defaultValue?: string; placeholder?: string }) {
  const [text, setText] = useState(defaultValue);
  const { items } = useTenantSuggestions(text);
  return (
    <label className="min-w-0 max-w-full text-sm">
      <span className="block text-slate-600">{label}</span>
      <TenantInput name={name} value={text} onChange={setText} suggestions={items} placeholder={placeholder} />
    </label>
  );
}

"use client";
// The decision picker of the single and the bulk resolve dialogs.
import type { Resolution } from "@/lib/ledger/states";
import { RESOLUTION_OPTIONS } from "@/components/ui/labels";
import { input, label as labelClass } from "@/components/ui/kit";

export function ResolutionSelect({ value, onChange }: { value: Resolution; onChange: (r: Resolution) => void }) {
  return (
    <label className={labelClass}>
      <span>Resolution</span>
      <select value={value} onChange={(e) => onChange(e.target.value as Resolution)} className={input}>
        {RESOLUTION_OPTIONS.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </label>
  );
}

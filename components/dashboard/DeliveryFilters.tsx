"use client";
// The subscription page's delivery filters. The state and error-class options
// come from the ledger's own lists (lib/ledger/states.ts) with their labels
// (components/ui/labels.ts), so the filter offers exactly what attempts can have.
import { input } from "@/components/ui/kit";
import { DELIVERY_STATE_OPTIONS, ERROR_CLASS_OPTIONS } from "@/components/ui/labels";
import { ZoneLabel } from "@/components/ui/time";
import { OptionSelect } from "@/components/ui/form";
import { LiveFieldset } from "@/components/ui/LiveButton";

export type DeliveryFilterValues = { state: string; eventType: string; from: string; to: string; statusCode: string; errorClass: string };
export const NO_FILTERS: DeliveryFilterValues = { state: "", eventType: "", from: "", to: "", statusCode: "", errorClass: "" };

export function DeliveryFilters({
  filters,
  eventTypes,
  onChange,
}: {
  filters: DeliveryFilterValues;
  eventTypes: string[];
  onChange: (k: keyof DeliveryFilterValues, v: string) => void;
}) {
  return (
    <form className="mb-3 grid grid-cols-2 gap-2 text-sm sm:grid-cols-3 lg:grid-cols-6" onSubmit={(e) => e.preventDefault()} aria-label="Filter deliveries">
      <LiveFieldset>
        <label className="flex flex-col gap-1">
          State
          <OptionSelect any="Any state" options={DELIVERY_STATE_OPTIONS} value={filters.state} onChange={(e) => onChange("state", e.target.value)} />
        </label>
        <label className="flex flex-col gap-1">
          Event type
          <OptionSelect
            any="Any type"
            options={eventTypes.map((t) => ({ value: t, label: t }))}
            value={filters.eventType}
            onChange={(e) => onChange("eventType", e.target.value)}
          />
        </label>
        <label className="flex flex-col gap-1">
          Status code
          <input
            className={input}
            inputMode="numeric"
            placeholder="e.g. 422"
            value={filters.statusCode}
            onChange={(e) => onChange("statusCode", e.target.value.replace(/\D/g, "").slice(0, 3))}
          />
        </label>
        <label className="flex flex-col gap-1">
          Error class
          <OptionSelect any="Any" options={ERROR_CLASS_OPTIONS} value={filters.errorClass} onChange={(e) => onChange("errorClass", e.target.value)} />
        </label>
        <label className="flex flex-col gap-1">
          <span>
            From (<ZoneLabel />)
          </span>
          <input type="datetime-local" className={input} value={filters.from} onChange={(e) => onChange("from", e.target.value)} />
        </label>
        <label className="flex flex-col gap-1">
          <span>
            To (<ZoneLabel />)
          </span>
          <input type="datetime-local" className={input} value={filters.to} onChange={(e) => onChange("to", e.target.value)} />
        </label>
      </LiveFieldset>
    </form>
  );
}

// The audit page's filter form: a plain GET form, so a filtered view is a URL
// to paste into a ticket. Actions and target types are offered from
// lib/audit.ts's lists with their labels (components/ui/labels.ts): exactly
// the names rows are written with.
import Link from "next/link";
import { btn, btnPrimary, card, input, label } from "@/components/ui/kit";
import { LocalDateTimeInput, ZoneLabel } from "@/components/ui/time";
import { AUDIT_ACTION_LABELS, AUDIT_TARGET_TYPE_LABELS, optionsOf } from "@/components/ui/labels";
import { AUDIT_ACTION_LIST, AUDIT_TARGET_TYPES } from "@/lib/audit";
import type { TAuditQuery } from "./find-audit-entries";
import { TenantPicker } from "@/components/ui/TenantPicker";

const AUDIT_TARGET_OPTIONS = optionsOf(AUDIT_TARGET_TYPES, AUDIT_TARGET_TYPE_LABELS);
const AUDIT_ACTION_OPTIONS = optionsOf(AUDIT_ACTION_LIST, AUDIT_ACTION_LABELS);

/** `tenantFilter`: a global viewer chooses a tenant, typed with suggestions (a viewer confined to one: its own applies). */
export function AuditFilterForm({ q, tenantFilter = false }: { q: TAuditQuery; tenantFilter?: boolean }) {
  return (
    <form method="get" action="/audit" className={`${card} grid grid-cols-2 gap-3 sm:grid-cols-3 lg:grid-cols-6`} aria-label="Filter the audit log">
      <label className={label}>
        Actor
        <input name="actor" defaultValue={q.actor ?? ""} className={input} placeholder="user:ana@…" />
      </label>
      <label className={label}>
        Action
        <select name="action" defaultValue={q.action ?? ""} className={input}>
          <option value="">Any action</option>
          {AUDIT_ACTION_OPTIONS.map((a) => (
            <option key={a.value} value={a.value}>
              {a.label}
            </option>
          ))}
        </select>
      </label>
      <label className={label}>
        Target type
        <select name="targetType" defaultValue={q.targetType ?? ""} className={input}>
          <option value="">Any</option>
          {AUDIT_TARGET_OPTIONS.map((t) => (
            <option key={t.value} value={t.value}>
              {t.label}
            </option>
          ))}
        </select>
      </label>
      <label className={label}>
        Target id
        <input name="targetId" defaultValue={q.targetId ?? ""} className={input} placeholder="dlv_… / sub_… / rdb_…" />
      </label>
      {tenantFilter && <TenantPicker name="tenant" label="Tenant" defaultValue={q.tenant ?? ""} placeholder="Any" />}
      <label className={label}>
        <span>
          From (<ZoneLabel />)
        </span>
        <LocalDateTimeInput name="from" defaultIso={q.from} className={input} />
      </label>
      <label className={label}>
        <span>
          Before (<ZoneLabel />)
        </span>
        <LocalDateTimeInput name="to" defaultIso={q.to} className={input} />
      </label>
      <div className="col-span-2 flex gap-2 sm:col-span-3 lg:col-span-6">
        <button type="submit" className={btnPrimary}>
          Filter
        </button>
        <Link href="/audit" className={btn}>
          Clear
        </Link>
      </div>
    </form>
  );
}

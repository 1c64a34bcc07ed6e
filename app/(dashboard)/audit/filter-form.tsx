// The audit page's filter form: a plain GET form, so a filtered view is a URL
// to paste into a ticket. Actions and target types are offered from
// lib/audit.ts's lists with their labels (components/ui/labels.ts): exactly
// the names rows are written with, and of those the ones the viewer's audit
// trail can hold (lib/audit.ts auditActionsIn).
import Link from "next/link";
import { btn, btnPrimary, card, input, label } from "@/components/ui/kit";
import { LocalDateTimeInput, ZoneLabel } from "@/components/ui/time";
import { AUDIT_ACTION_LABELS, AUDIT_ACTION_WORDS, AUDIT_TARGET_TYPE_LABELS, AUDIT_TARGET_TYPE_WORDS, labelOf, optionsOf } from "@/components/ui/labels";
import type { AuditAction, AuditTargetType } from "@/lib/audit";
import type { TAuditQuery } from "./find-audit-entries";
import { TenantPicker } from "@/components/ui/TenantPicker";

/**
 * The options, and the URL's value when it is none of them (typed or pasted in), marked: the form shows what the list
 * is filtered by, and sending it again keeps it.
 */
function withAsked<V extends string>(list: readonly V[], labels: Record<V, string>, asked: string | undefined) {
  const options: { value: string; label: string }[] = optionsOf(list, labels);
  if (asked && !(list as readonly string[]).includes(asked))
    options.push({ value: asked, label: `${labelOf(labels, asked)} (${Object.prototype.hasOwnProperty.call(labels, asked) ? "never in your audit trail" : "unknown"})` });
  return options;
}

/**
 * `actions`, `targetTypes`: what the viewer's audit trail can hold. `tenantFilter`: a global viewer chooses a tenant,
 * typed with suggestions (a viewer confined to one: its own applies). `district`: the options in a district's words.
 */
export function AuditFilterForm({
  q,
  actions,
  targetTypes,
  tenantFilter = false,
  district = false,
}: {
  q: TAuditQuery;
  actions: readonly AuditAction[];
  targetTypes: readonly AuditTargetType[];
  tenantFilter?: boolean;
  district?: boolean;
}) {
  return (
    <form method="get" action="/audit" className={`${card} grid grid-cols-2 gap-3 sm:grid-cols-3 lg:grid-cols-6`} aria-label="Filter the audit log">
      <label className={label}>
        Actor
        {/* A district reads its actors in words (an email, an API token's name, the portal); the filter takes those as typed. */}
        <input name="actor" defaultValue={q.actor ?? ""} className={input} placeholder={district ? "Email, token or portal" : "user:ana@…"} />
      </label>
      <label className={label}>
        Action
        <select name="action" defaultValue={q.action ?? ""} className={input}>
          <option value="">Any action</option>
          {withAsked(actions, district ? AUDIT_ACTION_WORDS : AUDIT_ACTION_LABELS, q.action).map((a) => (
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
          {withAsked(targetTypes, district ? AUDIT_TARGET_TYPE_WORDS : AUDIT_TARGET_TYPE_LABELS, q.targetType).map((t) => (
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

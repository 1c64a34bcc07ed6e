// The Audit page: every operator action (redrive, cancel, pause, resume,
// subscription changes, secret rotation…) from audit_entries, written in the
// same transaction as the change it records. A plain GET form: filters live
// in the URL, so a filtered view can be pasted into a ticket.
import Link from "next/link";
import { requireViewer } from "@/lib/auth/session";
import { getPrisma } from "@/lib/db/prisma";
import { EmptyState, PageHeader, btn, textLink } from "@/components/ui/kit";
import { Time } from "@/components/ui/time";
import {
  AUDIT_ACTION_LABELS,
  AUDIT_ACTION_WORDS,
  AUDIT_TARGET_TYPE_LABELS,
  AUDIT_TARGET_TYPE_WORDS,
  DELIVERY_STATE_LABELS,
  ERROR_CLASS_LABELS,
  labelOf,
} from "@/components/ui/labels";
import {
  AUDIT_ACTIONS,
  AUDIT_ACTION_LIST,
  auditActionOutside,
  auditActionsIn,
  auditTargetTypesIn,
  isAuditAction,
  parseAuditDetails,
  type AuditTargetType,
} from "@/lib/audit";
import { scopeOf, type Scope } from "@/lib/tenants/scope";
import { tenantNames } from "@/lib/tenants/manage-tenants";
import { ZAuditQuery, findAuditEntries, type TAuditQuery } from "./find-audit-entries";
import { AuditFilterForm } from "./filter-form";
import { ledgerDb } from "@/lib/ledger/read/db";
import { listNotifications } from "@/lib/ledger/sql/notifications";
import { NotificationsTable } from "@/components/dashboard/NotificationsTable";
import { actorInWords, count, num, possessive } from "@/lib/words";
import { describeFilter } from "@/components/redrive/describe-filter";
import { formatAbsolute } from "@/lib/dashboard/describe";
import { findSubscriptionNames } from "@/lib/subscriptions/manage-subscriptions";
import { displayUrl } from "@/lib/display-url";

export const dynamic = "force-dynamic";
export const metadata = { title: "Audit" };

const TARGET_LINK: Partial<Record<AuditTargetType, (id: string) => string>> = {
  delivery: (id) => `/deliveries/${encodeURIComponent(id)}`,
  subscription: (id) => `/subscriptions/${encodeURIComponent(id)}`,
  redrive_batch: (id) => `/redrives/${encodeURIComponent(id)}`,
  // The catalog card's anchor (components/catalog/EventTypeCard.tsx).
  event_type: (id) => `/catalog#type-${id.replace(/[^a-z0-9]/g, "-")}`,
};

/** The names of the subscriptions the rows' batches filtered on, for a district, which names them by name (the rows hold ids). */
async function batchSubscriptionNames(items: { action: string; details: unknown }[], scope: Scope): Promise<Record<string, string>> {
  const ids = items.flatMap((e) => (e.action === "redrive.create" ? [(e.details as { filter?: { subscriptionId?: unknown } } | null)?.filter?.subscriptionId] : []));
  return findSubscriptionNames(
    getPrisma(),
    ids.filter((id): id is string => typeof id === "string"),
    scope,
  );
}

/**
 * A row's details in a line, read through its action's schema; rows the schema does not know fall back to a generic
 * reading. `district`: in the words of a district's viewer, whose own district the row's tenant always is.
 */
function summarize(action: string, details: unknown, district: boolean, names: Record<string, string> = {}): string {
  if (isAuditAction(action)) {
    switch (action) {
      case "delivery.redrive":
      case "delivery.retry_now": {
        const d = parseAuditDetails(action, details);
        if (d)
          return `${d.eventId} from ${labelOf(DELIVERY_STATE_LABELS, d.from)}${d.lastStatusCode ? `; last answer HTTP ${d.lastStatusCode}` : d.lastErrorClass ? `; last answer ${labelOf(ERROR_CLASS_LABELS, d.lastErrorClass)}` : ""}`;
        break;
      }
      case "redrive.create": {
        const d = parseAuditDetails(action, details);
        // A district reads the batch as its dead letters sent again, its subscription by the name it gave it.
        if (d && district)
          return `${count(d.count, "dead letter")} sent again: ${describeFilter(d.filter, (iso) => formatAbsolute(iso), { names })}; ${num(d.ratePerSecond)} a second`;
        if (d) {
          const f = Object.entries(d.filter)
            .filter(([k]) => !(district && k === "tenant"))
            .map(([k, v]) => `${k}=${v}`);
          return `${count(d.count, "delivery", "deliveries")}; ${f.length ? `filter ${f.join(", ")}` : "no filter"}; ${d.ratePerSecond}/s${d.latestStateWins ? "; latest state wins" : ""}`;
        }
        break;
      }
      case "redrive.cancel": {
        const d = parseAuditDetails(action, details);
        if (d) return `${d.redriven} ${district ? "sent again" : "redriven"}, ${d.remaining} not reached`;
        break;
      }
      case "subscription.pause":
      case "subscription.resume":
      case "subscription.disable": {
        const d = parseAuditDetails(action, details);
        if (d) return `${"from" in d ? `${d.from} → ` : "HTTP 410; "}${d.to}`;
        break;
      }
      case "subscription.update": {
        const d = parseAuditDetails(action, details);
        if (d) return `changed ${d.changed.join(", ")}`;
        break;
      }
      case "subscription.create": {
        const d = parseAuditDetails(action, details);
        // Rows written before the audit masked the URL hold it as sent.
        if (d) return `${displayUrl(d.url)}; ${d.eventTypes.join(", ")}${d.tenant && !district ? `; tenant ${d.tenant}` : ""}`;
        break;
      }
      case "subscription.secret.rotate": {
        const d = parseAuditDetails(action, details);
        if (d) return `new secret ${d.secretId}; ${count(d.retiring.length, "old secret", "old secrets")} retiring after ${d.overlapSeconds} s`;
        break;
      }
      case "user.create":
      case "user.disable":
      case "user.enable":
      case "user.password_change": {
        const d = parseAuditDetails(action, details);
        if (d) return "role" in d ? `${d.email} (${d.role})` : d.email;
        break;
      }
      case "user.role": {
        const d = parseAuditDetails(action, details);
        if (d) return `${d.email}: ${d.from} → ${d.to}`;
        break;
      }
      case "tenant.contacts.update": {
        const d = parseAuditDetails(action, details);
        if (d)
          return `${count(d.emails, "address", "addresses")}${d.webhookHost ? `; webhook ${d.webhookHost}` : "; no webhook"}${d.dlqThreshold ? `; told at ${count(d.dlqThreshold, "dead letter", "dead letters")}` : ""}`;
        break;
      }
      case "notifications.settings.update": {
        const d = parseAuditDetails(action, details);
        if (d) return `default dead-letter threshold ${d.dlqThreshold.from} → ${d.dlqThreshold.to}`;
        break;
      }
      case "token.create":
      case "token.revoke": {
        const d = parseAuditDetails(action, details);
        if (d) return `"${d.name}" (${d.role})`;
        break;
      }
    }
  }
  if (!details || typeof details !== "object") return "";
  const d = details as Record<string, unknown>;
  const parts: string[] = [];
  if (typeof d.count === "number") parts.push(count(d.count, "delivery", "deliveries"));
  if (typeof d.from === "string" && typeof d.to === "string") parts.push(`${d.from} → ${d.to}`);
  return parts.join("; ");
}

/**
 * Why the filter can match nothing in this viewer's audit trail (an action or target type its rows never have), in a
 * sentence; null when it can. `district`: the name of the viewer's district.
 */
function neverInTrail(q: TAuditQuery, scope: Scope, district: string): string | null {
  const trail = scope.subscriptionId ? "this portal's audit trail" : `${possessive(district)} audit trail`;
  const because = {
    global: "it changes what every district shares, and is recorded for the whole service only",
    subscription: `it is recorded for the whole district, and this portal shows what concerns subscription ${scope.subscriptionId} only`,
  };
  if (q.action && isAuditAction(q.action)) {
    const why = auditActionOutside(q.action, scope);
    if (why) return `“${AUDIT_ACTION_WORDS[q.action]}” is never in ${trail}: ${because[why]}.`;
  }
  const target = q.targetType as AuditTargetType | undefined;
  if (target && Object.prototype.hasOwnProperty.call(AUDIT_TARGET_TYPE_WORDS, target) && !auditTargetTypesIn(scope).includes(target)) {
    const outside = AUDIT_ACTION_LIST.filter((a) => AUDIT_ACTIONS[a].target === target).map((a) => auditActionOutside(a, scope));
    return `Nothing in ${trail} has the target type “${AUDIT_TARGET_TYPE_WORDS[target]}”: ${outside.includes("subscription") ? because.subscription : because.global}.`;
  }
  return null;
}

export default async function AuditPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const viewer = await requireViewer("audit.read");
  // A viewer confined to a district reads the rows that touched it only (the query's scope); a global one sees a tenant column and filter.
  const global = !viewer.tenantId;
  const raw = await searchParams;
  const flat = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, (Array.isArray(v) ? v[0] : v) || undefined]));
  const q = ZAuditQuery.parse(flat);
  const scope = scopeOf(viewer);
  const district = global ? null : ((await getPrisma().tenant.findUnique({ where: { id: viewer.tenantId! }, select: { name: true } }))?.name ?? viewer.tenantId!);
  // An action (or target type) this viewer's rows never have is answered with why, not looked for.
  const never = district === null ? null : neverInTrail(q, scope, district);
  const [{ items, nextBefore }, notices] = await Promise.all([
    never ? { items: [], nextBefore: null } : findAuditEntries(getPrisma(), q, scope),
    // The notices the system sent districts are shown beside the operators' actions (the newest; all on /notifications).
    listNotifications(ledgerDb(), scope, { limit: 10 }),
  ]);
  const subscriptionName = global ? {} : await batchSubscriptionNames(items, scope);
  // The names of the tenants the rows name, however many tenants there are.
  const tenantName = global ? await tenantNames(getPrisma(), [...items.map((e) => e.tenantId), ...notices.map((n) => n.tenant)]) : new Map<string, string>();
  const keep = new URLSearchParams(Object.entries(flat).filter(([k, v]) => v && k !== "before") as [string, string][]);
  const nextHref = nextBefore ? `/audit?${new URLSearchParams({ ...Object.fromEntries(keep), before: nextBefore })}` : null;

  return (
    <section className="space-y-4">
      <PageHeader
        title="Audit"
        description={`${
          district === null ? "Operator actions" : `Who changed what for ${district}: its endpoints, secrets, accounts, links and deliveries sent again`
        }, newest first.${district === null ? " Each row was written in the same transaction as the change it records." : ""}`}
      />
      <AuditFilterForm q={q} actions={auditActionsIn(scope)} targetTypes={auditTargetTypesIn(scope)} tenantFilter={global} district={!global} />

      {items.length === 0 ? (
        <EmptyState title={district === null ? "No operator actions match these filters." : `Nothing in ${possessive(district)} audit trail matches these filters.`}>
          {never ? (
            <span data-testid="audit-never">{never}</span>
          ) : q.action && !isAuditAction(q.action) ? (
            // Typed or pasted in: an old row may still carry a name no longer written, so the list was looked through.
            <span data-testid="audit-never">hookledger writes no action called “{q.action}”; the Action list names every one it writes.</span>
          ) : null}
        </EmptyState>
      ) : (
        // One table for every width: below md each row reflows into a card.
        <div className="relative rounded-lg border border-slate-200 bg-white shadow-sm md:overflow-x-auto">
          <table className="block w-full text-left text-sm md:table">
            <thead className="hidden bg-slate-50 text-slate-600 md:table-header-group">
              <tr>
                <th className="px-3 py-2 font-medium">When</th>
                <th className="px-3 py-2 font-medium">Actor</th>
                {global && <th className="px-3 py-2 font-medium">Tenant</th>}
                <th className="px-3 py-2 font-medium">Action</th>
                <th className="px-3 py-2 font-medium">Target</th>
                <th className="px-3 py-2 font-medium">Reason</th>
                <th className="px-3 py-2 font-medium">Details</th>
              </tr>
            </thead>
            <tbody className="block md:table-row-group">
              {items.map((e) => {
                const href = TARGET_LINK[e.targetType as AuditTargetType]?.(e.targetId);
                return (
                  <tr key={e.id} data-testid="audit-row" className="block border-t border-slate-200 px-3 py-2 align-top first:border-t-0 md:table-row md:border-t md:p-0">
                    <td className="block whitespace-nowrap text-xs text-slate-600 md:table-cell md:px-3 md:py-2 md:text-sm md:text-slate-900">
                      <Time iso={e.createdAt} relative={false} />
                    </td>
                    {/* A district reads who it was in words; a global viewer the stored form, which the actor filter takes. */}
                    <td className="block break-all md:table-cell md:break-normal md:px-3 md:py-2" data-testid="audit-actor" title={e.actor}>
                      {global ? e.actor : actorInWords(e.actor)}
                    </td>
                    {global && (
                      <td className="block text-slate-700 md:table-cell md:px-3 md:py-2" data-testid="audit-tenant">
                        <span className="text-slate-500 md:hidden">Tenant: </span>
                        {e.tenantId ? (tenantName.get(e.tenantId) ?? e.tenantId) : "global"}
                      </td>
                    )}
                    {/* A district reads what was done in its words, the code as the cell's title; a global viewer the label and the code, which the action filter takes. */}
                    <td className="block font-medium md:table-cell md:px-3 md:py-2 md:font-normal" data-testid="audit-action" title={e.action}>
                      {global ? (
                        <>
                          {labelOf(AUDIT_ACTION_LABELS, e.action)}
                          <div className="font-mono text-xs text-slate-500">{e.action}</div>
                        </>
                      ) : (
                        labelOf(AUDIT_ACTION_WORDS, e.action)
                      )}
                    </td>
                    <td className="block break-all font-mono text-xs md:table-cell md:px-3 md:py-2">
                      {href ? (
                        <Link href={href} className="text-blue-700 hover:underline">
                          {e.targetId}
                        </Link>
                      ) : (
                        e.targetId
                      )}
                      <div className="font-sans text-slate-500">{labelOf(global ? AUDIT_TARGET_TYPE_LABELS : AUDIT_TARGET_TYPE_WORDS, e.targetType)}</div>
                    </td>
                    <td className="block md:table-cell md:px-3 md:py-2">
                      <span className="text-slate-500 md:hidden">Why: </span>
                      {e.reason ?? "—"}
                    </td>
                    <td className="block text-slate-700 wrap-anywhere md:table-cell md:px-3 md:py-2">
                      {summarize(e.action, e.details, !global, subscriptionName)}
                      {/* The row as stored, ids and codes included: an engineer's "JSON"; a district reads it as what it is, the
                          technical record of what the line above already says in words, for its engineers or a support ticket. */}
                      <details className="mt-1" data-testid="audit-details">
                        <summary className="cursor-pointer text-xs text-slate-500">{global ? "JSON" : "Technical details"}</summary>
                        <pre className="mt-1 max-w-md overflow-x-auto whitespace-pre-wrap break-all rounded bg-slate-50 p-2 text-xs">
                          {JSON.stringify(e.details, null, 2)}
                        </pre>
                      </details>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {nextHref && (
        <Link href={nextHref} className={btn}>
          Older entries
        </Link>
      )}
      <section aria-labelledby="audit-notifications" className="space-y-2 pt-4">
        <h2 id="audit-notifications" className="text-base font-semibold">
          {district === null ? "Notifications to districts" : `Notifications to ${district}`}
        </h2>
        <p className="text-sm text-slate-600">
          {district === null ? "What hookledger told districts about their endpoints" : `What hookledger told ${district} about its endpoints`}, to whom, and whether it
          arrived (newest 10;{" "}
          <Link href="/notifications" className={textLink}>
            all notifications
          </Link>
          ).
        </p>
        <NotificationsTable
          items={notices}
          showTenant={global}
          tenantName={tenantName}
          contactsHint={global ? undefined : "Contacts are set on the Notifications page."}
        />
      </section>
    </section>
  );
}

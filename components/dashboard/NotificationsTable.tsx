// The notices sent to districts (lib/ledger/sql/notifications.ts): to whom,
// about what, when, and sent or why not. The audit page and the Notifications
// page show it; a row reflows into a card on a phone.
import type { NotificationView } from "@/lib/ledger/sql/notifications";
import { DataTable, EmptyState, SubLink, stackedCell, stackedRow } from "@/components/ui/kit";
import { Time } from "@/components/ui/time";

const KIND_LABELS: Record<NotificationView["kind"], string> = {
  paused: "paused for failing",
  disabled: "disabled (410 Gone)",
  recovered: "resumed",
  dlq_threshold: "dead letters over the threshold",
  dlq_old: "dead letters waiting over a day",
  secret_expiring: "old signing secret ending",
};

const STATUS_LOOK: Record<NotificationView["status"], string> = {
  sent: "bg-emerald-100 text-emerald-900 ring-emerald-300",
  pending: "bg-sky-100 text-sky-900 ring-sky-300",
  failed: "bg-red-100 text-red-900 ring-red-300",
  suppressed: "bg-slate-100 text-slate-700 ring-slate-300",
  unaddressed: "bg-amber-100 text-amber-900 ring-amber-300",
};

function Outcome({ n, contactsHint }: { n: NotificationView; contactsHint: string }) {
  const word =
    n.status === "suppressed" ? "in the hour's digest" : n.status === "unaddressed" ? "not sent" : n.status === "pending" && n.attempts > 0 ? "retrying" : n.status;
  return (
    <div>
      <span className={`inline-block rounded px-1.5 py-0.5 text-xs font-medium ring-1 ring-inset ${STATUS_LOOK[n.status]}`} data-testid="notification-status">
        {word}
      </span>
      {n.sentAt && (
        <span className="ml-1 text-xs text-slate-600">
          <Time iso={n.sentAt} relative={false} />
        </span>
      )}
      {n.status === "pending" && n.nextAttemptAt && (
        <div className="text-xs text-slate-600">
          next try <Time iso={n.nextAttemptAt} />
        </div>
      )}
      {n.status === "unaddressed" && <div className="text-xs text-slate-600">{contactsHint}</div>}
      {n.lastError && n.status !== "sent" && <div className="text-xs text-slate-600 wrap-anywhere">{n.lastError}</div>}
    </div>
  );
}

/**
 * `emptyTitle`: what an empty list says when it is filtered (by default: none sent yet). `contactsHint`: where the
 * viewer sets contacts, said beside a notice nobody could be sent.
 */
export function NotificationsTable({
  items,
  showTenant,
  tenantName,
  emptyTitle = "No notifications yet.",
  contactsHint = "Contacts are set on Admin → Tenants.",
}: {
  items: NotificationView[];
  showTenant: boolean;
  tenantName?: Map<string, string>;
  emptyTitle?: string;
  contactsHint?: string;
}) {
  if (items.length === 0)
    return (
      <EmptyState title={emptyTitle}>
        A notice goes to the district&apos;s contacts when one of its endpoints is paused for failing, disabled by a 410 or resumed, when its dead letters pass the
        threshold, and a day before an old signing secret stops working.
      </EmptyState>
    );
  const columns = ["When", ...(showTenant ? ["Tenant"] : []), "What", "To", "Delivered"];
  return (
    <DataTable columns={columns} stacked look="boxed">
      {items.map((n) => (
        <tr key={n.id} className={`${stackedRow} border-t border-slate-200 px-3 align-top first:border-t-0`} data-testid="notification-row">
          <td className={`${stackedCell()} whitespace-nowrap py-1 text-xs text-slate-600 sm:px-3 sm:py-2 sm:text-sm sm:text-slate-900`}>
            <Time iso={n.createdAt} relative={false} />
          </td>
          {showTenant && (
            <td className={`${stackedCell()} py-1 sm:px-3 sm:py-2`} data-testid="notification-tenant">
              {tenantName?.get(n.tenant) ?? n.tenant}
            </td>
          )}
          <td className={`${stackedCell()} py-1 sm:px-3 sm:py-2`}>
            <div className="font-medium">
              {KIND_LABELS[n.kind]}
              {n.digestCount > 0 ? ` · digest of ${n.digestCount} more` : ""}
            </div>
            <div className="text-xs text-slate-600 wrap-anywhere">{n.subject}</div>
            {n.subscriptionId && (
              <div className="text-xs">
                <SubLink id={n.subscriptionId} name={null} />
              </div>
            )}
          </td>
          <td className={`${stackedCell()} py-1 text-sm wrap-anywhere sm:px-3 sm:py-2`}>
            {n.channel === "none" ? (
              <span className="text-amber-900">nobody: no contacts were set</span>
            ) : (
              <>
                <span className="text-slate-500">{n.channel === "email" ? "e-mail " : "webhook "}</span>
                {n.recipient}
              </>
            )}
          </td>
          <td className={`${stackedCell()} py-1 sm:px-3 sm:py-2`}>
            <Outcome n={n} contactsHint={contactsHint} />
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

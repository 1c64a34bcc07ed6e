// Notifications: for a district (its manager, or its portal), whom hookledger
// tells when one of its endpoints fails, and what it told them; for a global
// viewer, every district's notices (contacts are set per tenant on Admin →
// Tenants).
import Link from "next/link";
import { requireViewer } from "@/lib/auth/session";
import { getPrisma } from "@/lib/db/prisma";
import { AppError } from "@/lib/errors";
import { ledgerDb } from "@/lib/ledger/read/db";
import { listNotificationPage } from "@/lib/ledger/sql/notifications";
import { getContacts, mayChangeContacts } from "@/lib/notify/contacts";
import { ZNotificationsQuery } from "@/lib/notify/input";
import { tenantNames } from "@/lib/tenants/manage-tenants";
import { scopeOf, type Scope } from "@/lib/tenants/scope";
import { PageHeader, btn, btnPrimary, card, textLink } from "@/components/ui/kit";
import { TenantPicker } from "@/components/ui/TenantPicker";
import { NotificationsTable } from "@/components/dashboard/NotificationsTable";
import { ContactsForm } from "./contacts-form";

export const dynamic = "force-dynamic";
export const metadata = { title: "Notifications" };

async function DistrictContacts({ viewer }: { viewer: Awaited<ReturnType<typeof requireViewer>> }) {
  const tenant = viewer.tenantId!;
  const prisma = getPrisma();
  const [contacts, t] = await Promise.all([getContacts(prisma, tenant, viewer), prisma.tenant.findUnique({ where: { id: tenant }, select: { name: true } })]);
  const name = t?.name ?? tenant;
  if (mayChangeContacts(viewer))
    return (
      <ContactsForm
        tenant={tenant}
        tenantName={name}
        emails={contacts.emails}
        webhookUrl={contacts.webhookUrl}
        dlqThreshold={contacts.dlqThreshold}
        defaultDlqThreshold={contacts.defaultDlqThreshold}
      />
    );
  return (
    <div className={card}>
      <h2 className="text-base font-semibold">Who is told when an endpoint fails</h2>
      <p className="mt-1 text-sm text-slate-700 wrap-anywhere">
        {contacts.emails.length ? contacts.emails.join(", ") : "Nobody yet: a manager of your district sets the addresses here."}
        {contacts.webhookUrl ? ` · webhook ${contacts.webhookUrl}` : ""}
      </p>
      <p className="mt-1 text-sm text-slate-700">
        Told when one endpoint&apos;s dead letters reach {contacts.dlqThreshold ?? contacts.defaultDlqThreshold}
        {contacts.dlqThreshold === null ? " (the default)" : ""}.
      </p>
    </div>
  );
}

/** Notices a page. */
const PAGE_SIZE = 100;

/**
 * The page the URL's cursor names (a page's nextCursor: the notices after it), or the newest. A cursor that names no
 * notice this viewer may see (mistyped, cut short, another district's) reads the newest page, and says so.
 */
async function noticePage(scope: Scope, cursor: string | undefined, tenant: string | undefined) {
  if (cursor && ZNotificationsQuery.safeParse({ cursor }).success) {
    try {
      return { ...(await listNotificationPage(ledgerDb(), scope, { limit: PAGE_SIZE, cursor, tenant })), cursor, badCursor: false };
    } catch (e) {
      if (!(e instanceof AppError && e.code === "validation_failed")) throw e;
    }
  }
  return { ...(await listNotificationPage(ledgerDb(), scope, { limit: PAGE_SIZE, tenant })), cursor: undefined, badCursor: cursor !== undefined };
}

/** The page's address with `params` (the tenant filter kept across pages). */
const pageHref = (params: Record<string, string | undefined>) => {
  const q = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => Boolean(e[1])));
  return q.size ? `/notifications?${q}` : "/notifications";
};

export default async function NotificationsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const viewer = await requireViewer("notifications.read");
  const global = !viewer.tenantId;
  const raw = await searchParams;
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v)?.trim() || undefined;
  // A global viewer's tenant filter (a district's viewer reads its own whatever the address says). Too long to be any
  // tenant's id: no tenant's, said below rather than refused.
  const tenant = global ? one(raw.tenant)?.slice(0, 200) : undefined;
  const { items, nextCursor, cursor, badCursor } = await noticePage(scopeOf(viewer), one(raw.cursor), tenant);
  // The names of the page's tenants (and the filter's), however many tenants there are.
  const tenantName = global ? await tenantNames(getPrisma(), [...items.map((n) => n.tenant), ...(tenant ? [tenant] : [])]) : new Map<string, string>();
  const unknownTenant = tenant !== undefined && !tenantName.has(tenant);
  return (
    <section className="space-y-4">
      <PageHeader
        title="Notifications"
        description={
          global ? (
            <>
              What hookledger told each district about its endpoints, newest first, and whether it arrived. Each district&apos;s contacts are set on{" "}
              <Link href="/admin/tenants" className={textLink}>
                Admin → Tenants
              </Link>
              .
            </>
          ) : (
            "Whom hookledger tells when one of your endpoints fails, and what it told them."
          )
        }
      />
      {!global && <DistrictContacts viewer={viewer} />}
      <h2 className="text-base font-semibold">Notices, newest first</h2>
      {global && (
        // A plain GET form: the filtered list is an address to share, and it works before the page's scripts run.
        <form method="get" action="/notifications" aria-label="Filter notifications" className={`${card} flex flex-wrap items-end gap-3`}>
          <TenantPicker name="tenant" label="Tenant" defaultValue={tenant ?? ""} placeholder="Every tenant" />
          <button type="submit" className={btnPrimary}>
            Filter
          </button>
          {tenant && (
            <Link href="/notifications" className={btn}>
              Every tenant
            </Link>
          )}
        </form>
      )}
      {badCursor && (
        <p className="text-sm text-slate-700" role="status">
          The link named no place in this list (it may be cut short, or from another district), so the newest notices are shown.
        </p>
      )}
      <NotificationsTable
        items={items}
        showTenant={global}
        tenantName={tenantName}
        contactsHint={
          global ? undefined : mayChangeContacts(viewer) ? "Add an address above to be told next time." : "A manager of your district sets the addresses on this page."
        }
        emptyTitle={
          unknownTenant
            ? `No tenant has the id “${tenant}”: type one the suggestions offer, or clear the filter.`
            : tenant
              ? `No notifications to ${tenantName.get(tenant)} yet.`
              : undefined
        }
      />
      {(cursor || nextCursor) && (
        <nav aria-label="Pages of notifications" className="flex flex-wrap gap-2">
          {cursor && (
            <Link href={pageHref({ tenant })} className={btn}>
              Newest
            </Link>
          )}
          {nextCursor && (
            <Link href={pageHref({ tenant, cursor: nextCursor })} className={btn}>
              Older notices →
            </Link>
          )}
        </nav>
      )}
    </section>
  );
}

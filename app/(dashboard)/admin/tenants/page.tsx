// Tenants (districts): every one with its id, name, and how many subscriptions,
// users and tokens it has; a form to add one. A global admin's page only: a
// district's own admin is confined to its district and may not make others.
import { forbidden } from "next/navigation";
import { getPrisma } from "@/lib/db/prisma";
import { requireViewer } from "@/lib/auth/session";
import { findTenantPage } from "@/lib/tenants/manage-tenants";
import { getNotificationSettings } from "@/lib/notify/settings";
import { Time } from "@/components/ui/time";
import { DataTable, PageHeader, btn, card, input, stackedCell, stackedRow } from "@/components/ui/kit";
import { AdminNav } from "../nav";
import { CreateTenantForm, DefaultDlqThresholdForm } from "../forms";
import { ContactsForm } from "../../notifications/contacts-form";
import { noun, count, num } from "@/lib/words";

export const dynamic = "force-dynamic";
export const metadata = { title: "Tenants" };

export default async function TenantsPage({ searchParams }: { searchParams: Promise<{ q?: string; page?: string }> }) {
  const viewer = await requireViewer("tenants.manage");
  if (viewer.tenantId) forbidden();
  const prisma = getPrisma();
  const sp = await searchParams;
  const q = typeof sp.q === "string" ? sp.q.trim().slice(0, 200) : "";
  // A page at a time: at thousands of districts, every row and contacts form at once was megabytes of HTML.
  const found = await findTenantPage(prisma, viewer, { q, page: Number(sp.page) || 1 });
  const tenants = found.items;
  const ids = tenants.map((t) => t.id);
  const [subs, users, tokens, contacts, defaults] = await Promise.all([
    prisma.subscription.groupBy({ by: ["tenant"], where: { archivedAt: null, tenant: { in: ids } }, _count: { _all: true } }),
    prisma.user.groupBy({ by: ["tenantId"], where: { disabledAt: null, tenantId: { in: ids } }, _count: { _all: true } }),
    prisma.apiToken.groupBy({ by: ["tenantId"], where: { revokedAt: null, tenantId: { in: ids } }, _count: { _all: true } }),
    prisma.tenantContact.findMany({ where: { tenant: { in: ids } } }),
    getNotificationSettings(prisma),
  ]);
  const contactsOf = new Map(contacts.map((c) => [c.tenant, c]));
  const countOf = <K extends string>(rows: ({ _count: { _all: number } } & Record<K, string | null>)[], key: K, id: string) =>
    rows.find((r) => r[key] === id)?._count._all ?? 0;
  /** A count, with its noun on a phone, where the row is a card without the column headings. */
  const counted = (n: number, one: string) => (
    <>
      {n}
      <span className="text-slate-500 sm:hidden"> {noun(n, one)}</span>
    </>
  );
  return (
    <section>
      <AdminNav current="/admin/tenants" global />
      <PageHeader
        title="Tenants"
        description={
          <>
            Districts. A subscription, user or API token with a tenant sees and acts on that district only; one without is global. Producers name the tenant of an event
            in <code>subject.tenant</code>.
          </>
        }
      />
      <CreateTenantForm />
      <TenantSearch q={q} />
      {tenants.length === 0 ? (
        <p className="mt-6 text-sm text-slate-600">{q ? `No tenant's id or name contains “${q}”.` : "No tenants yet."}</p>
      ) : (
        <DataTable stacked className="mt-6" columns={["Name", "Id", "Subscriptions", "Users", "Tokens", "Created"]}>
          {tenants.map((t) => (
            <tr key={t.id} className={`border-t border-slate-200 ${stackedRow}`} data-testid="tenant-row">
              <td className={`${stackedCell(true)} font-medium sm:py-2 sm:pr-3`}>{t.name}</td>
              <td className={`${stackedCell(true)} font-mono text-xs sm:py-2 sm:pr-3`}>{t.id}</td>
              <td className={`${stackedCell(true)} sm:py-2 sm:pr-3`}>{counted(countOf(subs, "tenant", t.id), "subscription")}</td>
              <td className={`${stackedCell(true)} sm:py-2 sm:pr-3`}>{counted(countOf(users, "tenantId", t.id), "user")}</td>
              <td className={`${stackedCell(true)} sm:py-2 sm:pr-3`}>{counted(countOf(tokens, "tenantId", t.id), "token")}</td>
              <td className={`${stackedCell(true)} sm:py-2`}>
                <span className="text-slate-500 sm:hidden">created </span>
                <Time iso={t.createdAt} relative={false} />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <TenantPager q={q} page={found.page} pageSize={found.pageSize} shown={tenants.length} total={found.total} />
      {/* Always shown: the default threshold also governs hookledger.dlq.threshold_exceeded for subscriptions of no tenant. */}
      <section aria-labelledby="tenant-contacts" className="mt-8 space-y-2">
        <h2 id="tenant-contacts" className="text-base font-semibold">
          Notification contacts
        </h2>
        <p className="text-sm text-slate-600">Whom each district&apos;s notices go to. A district&apos;s manager can set its own on its Notifications page.</p>
        <div className={card}>
          <DefaultDlqThresholdForm value={defaults.dlqThreshold} />
        </div>
        {tenants.map((t) => {
          const c = contactsOf.get(t.id);
          const n = c?.emails.length ?? 0;
          return (
            <details key={t.id} className="rounded-lg border border-slate-200 bg-white" data-testid="tenant-contacts">
              <summary className="cursor-pointer px-4 py-2 text-sm">
                <span className="font-medium">{t.name}</span>{" "}
                <span className="text-slate-600">
                  {n === 0 ? "nobody is told" : count(n, "address", "addresses")}
                  {c?.webhookUrl ? " and a webhook" : ""}
                </span>
              </summary>
              <div className="p-2">
                <ContactsForm
                  tenant={t.id}
                  tenantName={t.name}
                  emails={c?.emails ?? []}
                  webhookUrl={c?.webhookUrl ?? null}
                  dlqThreshold={c?.dlqThreshold ?? null}
                  defaultDlqThreshold={defaults.dlqThreshold}
                />
              </div>
            </details>
          );
        })}
      </section>
    </section>
  );
}

/** A plain GET form: it works before (and without) the page's scripts. */
function TenantSearch({ q }: { q: string }) {
  return (
    <form action="/admin/tenants" role="search" aria-label="Tenants" className="mt-6 flex flex-wrap items-end gap-2">
      <label className="flex min-w-64 flex-col gap-1 text-sm text-slate-700">
        Find a tenant
        <input type="search" name="q" defaultValue={q} maxLength={200} placeholder="Part of an id or a name" className={input} />
      </label>
      <button type="submit" className={btn}>
        Search
      </button>
    </form>
  );
}

/** Which tenants are shown, of how many, and links to the pages either side (the contacts below are this page's). */
function TenantPager({ q, page, pageSize, shown, total }: { q: string; page: number; pageSize: number; shown: number; total: number }) {
  if (total === 0) return null;
  const href = (p: number) => `/admin/tenants?${new URLSearchParams({ ...(q ? { q } : {}), ...(p > 1 ? { page: String(p) } : {}) })}`;
  const from = (page - 1) * pageSize + 1;
  return (
    <nav aria-label="Tenant pages" className="mt-3 flex flex-wrap items-center gap-3 text-sm">
      <span className="text-slate-700" aria-live="polite">
        Tenants {num(from)}–{num(from + shown - 1)} of {num(total)}
        {q ? ` whose id or name contains “${q}”` : ""}
      </span>
      {page > 1 && (
        <a className={btn} href={href(page - 1)}>
          ← Previous
        </a>
      )}
      {from + shown - 1 < total && (
        <a className={btn} href={href(page + 1)}>
          Next →
        </a>
      )}
    </nav>
  );
}

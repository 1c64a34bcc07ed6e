// Tenants (districts): every one with its id, name, and how many subscriptions,
// users and tokens it has; a form to add one. A global admin's page only: a
// district's own admin is confined to its district and may not make others.
import { forbidden } from "next/navigation";
import { getPrisma } from "@/lib/db/prisma";
import { requireViewer } from "@/lib/auth/session";
import { listTenants } from "@/lib/tenants/manage-tenants";
import { getNotificationSettings } from "@/lib/notify/settings";
import { Time } from "@/components/ui/time";
import { DataTable, PageHeader, card, stackedCell, stackedRow } from "@/components/ui/kit";
import { AdminNav } from "../nav";
import { CreateTenantForm, DefaultDlqThresholdForm } from "../forms";
import { ContactsForm } from "../../notifications/contacts-form";
import { noun, count } from "@/lib/words";

export const dynamic = "force-dynamic";
export const metadata = { title: "Tenants · hookledger" };

export default async function TenantsPage() {
  const viewer = await requireViewer("tenants.manage");
  if (viewer.tenantId) forbidden();
  const prisma = getPrisma();
  const [tenants, subs, users, tokens, contacts, defaults] = await Promise.all([
    listTenants(prisma, viewer),
    prisma.subscription.groupBy({ by: ["tenant"], where: { archivedAt: null }, _count: { _all: true } }),
    prisma.user.groupBy({ by: ["tenantId"], where: { disabledAt: null }, _count: { _all: true } }),
    prisma.apiToken.groupBy({ by: ["tenantId"], where: { revokedAt: null }, _count: { _all: true } }),
    prisma.tenantContact.findMany({ take: 5000 }),
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
      {tenants.length === 0 ? (
        <p className="mt-6 text-sm text-slate-600">No tenants yet.</p>
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

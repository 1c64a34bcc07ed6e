import { forbidden } from "next/navigation";
import { getPrisma } from "@/lib/db/prisma";
import { requireViewer } from "@/lib/auth/session";
import { findTokens } from "@/lib/auth/admin";
import { ROLES } from "@/lib/auth/permissions";
import { tenantNames } from "@/lib/tenants/manage-tenants";
import { Time } from "@/components/ui/time";
import { DataTable, PageHeader, btn, input, stackedCell, stackedRow } from "@/components/ui/kit";
import { count, num } from "@/lib/words";
import { AdminNav, TenantName } from "../nav";
import { CreateTokenForm, RevokeTokenButton } from "../forms";

export const dynamic = "force-dynamic";
export const metadata = { title: "API tokens" };

const when = (iso: string | null) => (iso ? <Time iso={iso} relative={false} /> : "never");

export default async function TokensPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const viewer = await requireViewer("tokens.manage");
  // Accounts and tokens are a global admin's to manage: a district's admin could otherwise mint a global one.
  if (viewer.tenantId) forbidden();
  const asked = (await searchParams).q;
  const q = (Array.isArray(asked) ? asked[0] : asked)?.trim() ?? "";
  const { items: tokens, total } = await findTokens(getPrisma(), viewer, { q });
  // The names of the tenants the rows name, however many tenants there are.
  const tenantName = await tenantNames(
    getPrisma(),
    tokens.map((x) => x.tenantId),
  );
  return (
    <section>
      <AdminNav current="/admin/tokens" global={!viewer.tenantId} />
      <PageHeader
        title="API tokens"
        description={
          <>
            Bearer tokens for <code>/api/v1</code>. A producer token may only publish events. Tokens are stored hashed and shown once.
          </>
        }
      />
      <CreateTokenForm roles={ROLES} />
      <form method="get" action="/admin/tokens" role="search" aria-label="Find tokens" className="mt-6 flex flex-wrap items-end gap-2">
        <label className="text-sm">
          <span className="block text-slate-600">Find a token (name, id or tenant)</span>
          <input name="q" defaultValue={q} maxLength={200} className={input} />
        </label>
        <button type="submit" className={btn}>
          Find
        </button>
      </form>
      {total > tokens.length && (
        <p role="status" className="mt-2 text-sm text-slate-700" data-testid="tokens-truncated">
          Showing the newest {num(tokens.length)} of {count(total, "token")}
          {q ? ` matching “${q}”` : ""}; find an older one by its name, id or tenant.
        </p>
      )}
      <DataTable stacked className="mt-4" columns={["Name", "Role", "Tenant", "Created", "Last used", "Status", { label: "Actions", srOnly: true }]}>
        {tokens.map((t) => (
          <tr key={t.id} className={`border-t border-slate-200 ${stackedRow}`}>
            <td className={`${stackedCell()} break-all sm:py-2`}>
              <span className="font-medium sm:font-normal">{t.name}</span> <span className="font-mono text-xs text-slate-500">{t.id}</span>
            </td>
            <td className={`${stackedCell(true)} sm:py-2`}>{t.role}</td>
            <td className={`${stackedCell(true)} sm:py-2`}>
              <TenantName id={t.tenantId} names={tenantName} />
            </td>
            <td className={`${stackedCell(true)} sm:py-2`}>
              <span className="text-slate-500 sm:hidden">created </span>
              {when(t.createdAt)}
            </td>
            <td className={`${stackedCell(true)} sm:py-2`}>
              <span className="text-slate-500 sm:hidden">last used </span>
              {when(t.lastUsedAt)}
            </td>
            <td className={`${stackedCell(true)} sm:py-2`}>{t.revokedAt ? <>revoked {when(t.revokedAt)}</> : "active"}</td>
            <td className={`${stackedCell()} pt-1 sm:py-2`}>{t.revokedAt ? null : <RevokeTokenButton id={t.id} name={t.name} />}</td>
          </tr>
        ))}
      </DataTable>
    </section>
  );
}

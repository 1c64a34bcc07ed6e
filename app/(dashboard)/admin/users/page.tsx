import { forbidden } from "next/navigation";
import { getPrisma } from "@/lib/db/prisma";
import { requireViewer } from "@/lib/auth/session";
import { findUsers } from "@/lib/auth/admin";
import { USER_ROLES } from "@/lib/auth/users";
import { tenantNames } from "@/lib/tenants/manage-tenants";
import { Time } from "@/components/ui/time";
import { DataTable, PageHeader, stackedCell, stackedRow } from "@/components/ui/kit";
import { AdminNav, TenantName } from "../nav";
import { CreateUserForm, UserDisableButton } from "../forms";

export const dynamic = "force-dynamic";
export const metadata = { title: "Users" };

export default async function UsersPage() {
  const viewer = await requireViewer("users.manage");
  // Accounts and tokens are a global admin's to manage: a district's admin could otherwise mint a global one.
  if (viewer.tenantId) forbidden();
  const users = await findUsers(getPrisma(), viewer);
  // The names of the tenants the rows name, however many tenants there are.
  const tenantName = await tenantNames(
    getPrisma(),
    users.map((x) => x.tenantId),
  );
  return (
    <section>
      <AdminNav current="/admin/users" global={!viewer.tenantId} />
      <PageHeader
        title="Users"
        description={
          <>
            People who sign in to the dashboard. Roles: support reads and copies receipts; manager also pauses, resumes and edits subscriptions; engineer also redrives;
            admin also manages users, tokens and secrets.
          </>
        }
      />
      <CreateUserForm roles={USER_ROLES} />
      <DataTable stacked className="mt-6" columns={["Email", "Role", "Tenant", "Last sign-in", "Status", { label: "Actions", srOnly: true }]}>
        {users.map((u) => (
          <tr key={u.id} className={`border-t border-slate-200 ${stackedRow}`}>
            <td className={`${stackedCell()} font-medium sm:py-2 sm:font-normal`}>{u.email}</td>
            <td className={`${stackedCell(true)} sm:py-2`}>{u.role}</td>
            <td className={`${stackedCell(true)} sm:py-2`}>
              <TenantName id={u.tenantId} names={tenantName} />
            </td>
            <td className={`${stackedCell(true)} sm:py-2`}>
              <span className="text-slate-500 sm:hidden">last sign-in </span>
              {u.lastSignInAt ? <Time iso={u.lastSignInAt} relative={false} /> : "never"}
            </td>
            <td className={`${stackedCell(true)} sm:py-2`}>{u.disabled ? "disabled" : "active"}</td>
            <td className={`${stackedCell()} pt-1 sm:py-2`}>{u.id === viewer.id ? null : <UserDisableButton id={u.id} disabled={u.disabled} />}</td>
          </tr>
        ))}
      </DataTable>
    </section>
  );
}

import { forbidden } from "next/navigation";
import { getPrisma } from "@/lib/db/prisma";
import { requireViewer } from "@/lib/auth/session";
import { findUsers } from "@/lib/auth/admin";
import { USER_ROLES } from "@/lib/auth/users";
import { listTenants } from "@/lib/tenants/service";
import { Time } from "@/components/ui/time";
import { AdminNav } from "../nav";
import { CreateUserForm, UserDisableButton } from "../forms";

export const dynamic = "force-dynamic";
export const metadata = { title: "Users · hookledger" };

export default async function UsersPage() {
  const viewer = await requireViewer("users.manage");
  // Accounts and tokens are a global admin's to manage: a district's admin could otherwise mint a global one.
  if (viewer.tenantId) forbidden();
  const [users, tenants] = await Promise.all([findUsers(getPrisma(), viewer), listTenants(getPrisma(), viewer)]);
  const tenantName = new Map(tenants.map((t) => [t.id, t.name]));
  return (
    <section>
      <AdminNav current="/admin/users" global={!viewer.tenantId} />
      <h1 className="text-2xl font-semibold">Users</h1>
      <p className="mt-1 text-sm text-slate-600">
        People who sign in to the dashboard. Roles: support reads and copies receipts; manager also pauses, resumes and edits subscriptions; engineer also redrives; admin
        also manages users, tokens and secrets.
      </p>
      <CreateUserForm tenants={tenants.map((t) => ({ id: t.id, name: t.name }))} global={!viewer.tenantId} roles={USER_ROLES} />
      {/* Wider than a phone: the table scrolls, not the page (relative: the sr-only header would otherwise be placed, and widen the page, outside it). */}
      <div className="relative mt-6 overflow-x-auto">
        <table className="w-full text-left text-sm">
          <thead className="text-slate-500">
            <tr>
              <th className="py-2">Email</th>
              <th className="py-2">Role</th>
              <th className="py-2">Tenant</th>
              <th className="py-2">Last sign-in</th>
              <th className="py-2">Status</th>
              <th className="py-2">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {users.map((u) => (
              <tr key={u.id} className="border-t border-slate-200">
                <td className="py-2">{u.email}</td>
                <td className="py-2">{u.role}</td>
                <td className="py-2">
                  {u.tenantId ? (
                    <>
                      {tenantName.get(u.tenantId) ?? u.tenantId} <span className="font-mono text-xs text-slate-500">{u.tenantId}</span>
                    </>
                  ) : (
                    "global"
                  )}
                </td>
                <td className="py-2">{u.lastSignInAt ? <Time iso={u.lastSignInAt} relative={false} /> : "never"}</td>
                <td className="py-2">{u.disabled ? "disabled" : "active"}</td>
                <td className="py-2">{u.id === viewer.id ? null : <UserDisableButton id={u.id} disabled={u.disabled} />}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

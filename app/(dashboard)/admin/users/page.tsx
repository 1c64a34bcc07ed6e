import { getPrisma } from "@/lib/db/prisma";
import { requireViewer } from "@/lib/auth/session";
import { findUsers } from "@/lib/auth/admin";
import { USER_ROLES } from "@/lib/auth/users";
import { CreateUserForm, UserDisableButton } from "../forms";

export const dynamic = "force-dynamic";
export const metadata = { title: "Users · hookledger" };

export default async function UsersPage() {
  const viewer = await requireViewer("users.manage");
  const users = await findUsers(getPrisma(), viewer);
  return (
    <section>
      <h1 className="text-2xl font-semibold">Users</h1>
      <p className="mt-1 text-sm text-slate-600">
        People who sign in to the dashboard. Roles: support reads and copies receipts; manager also pauses, resumes and edits subscriptions; engineer also redrives; admin also manages users, tokens and secrets.
      </p>
      <CreateUserForm roles={USER_ROLES} />
      <table className="mt-6 w-full text-left text-sm">
        <thead className="text-slate-500">
          <tr>
            <th className="py-2">Email</th>
            <th className="py-2">Role</th>
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
              <td className="py-2">{u.lastSignInAt ? new Date(u.lastSignInAt).toISOString().replace("T", " ").slice(0, 16) + " UTC" : "never"}</td>
              <td className="py-2">{u.disabled ? "disabled" : "active"}</td>
              <td className="py-2">{u.id === viewer.id ? null : <UserDisableButton id={u.id} disabled={u.disabled} />}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

import { getPrisma } from "@/lib/db/prisma";
import { requireViewer } from "@/lib/auth/session";
import { findTokens } from "@/lib/auth/admin";
import { ROLES } from "@/lib/auth/permissions";
import { CreateTokenForm, RevokeTokenButton } from "../forms";

export const dynamic = "force-dynamic";
export const metadata = { title: "API tokens · hookledger" };

const when = (iso: string | null) => (iso ? new Date(iso).toISOString().replace("T", " ").slice(0, 16) + " UTC" : "never");

export default async function TokensPage() {
  const viewer = await requireViewer("tokens.manage");
  const tokens = await findTokens(getPrisma(), viewer);
  return (
    <section>
      <h1 className="text-2xl font-semibold">API tokens</h1>
      <p className="mt-1 text-sm text-slate-600">
        Bearer tokens for <code>/api/v1</code>. A producer token may only publish events. Tokens are stored hashed and shown once.
      </p>
      <CreateTokenForm roles={ROLES} />
      <table className="mt-6 w-full text-left text-sm">
        <thead className="text-slate-500">
          <tr>
            <th className="py-2">Name</th>
            <th className="py-2">Role</th>
            <th className="py-2">Created</th>
            <th className="py-2">Last used</th>
            <th className="py-2">Status</th>
            <th className="py-2">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {tokens.map((t) => (
            <tr key={t.id} className="border-t border-slate-200">
              <td className="py-2">
                {t.name} <span className="font-mono text-xs text-slate-500">{t.id}</span>
              </td>
              <td className="py-2">{t.role}</td>
              <td className="py-2">{when(t.createdAt)}</td>
              <td className="py-2">{when(t.lastUsedAt)}</td>
              <td className="py-2">{t.revokedAt ? `revoked ${when(t.revokedAt)}` : "active"}</td>
              <td className="py-2">{t.revokedAt ? null : <RevokeTokenButton id={t.id} name={t.name} />}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

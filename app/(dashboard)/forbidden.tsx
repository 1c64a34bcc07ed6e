// What forbidden() renders (requireViewer with a permission the viewer lacks): inside the dashboard's frame, with
// the navigation the viewer may use, one sentence saying why and whom to ask, and a way back.
import Link from "next/link";
import { getViewer } from "@/lib/auth/session";
import { getPrisma } from "@/lib/db/prisma";
import { navFor } from "@/components/dashboard/page-access";
import { RefusedReason } from "@/components/dashboard/RefusedReason";

export default async function Forbidden() {
  const viewer = await getViewer();
  const tenant = viewer?.tenantId ? await getPrisma().tenant.findUnique({ where: { id: viewer.tenantId }, select: { name: true } }) : null;
  const home = navFor(viewer)[0];
  return (
    <div className="space-y-3">
      <h1 className="text-2xl font-semibold text-slate-900">Not allowed for your account</h1>
      {viewer ? (
        <RefusedReason role={viewer.role} tenantId={viewer.tenantId ?? null} tenantName={tenant?.name ?? null} portal={viewer.kind === "portal"} />
      ) : (
        <p className="text-slate-700">Sign in to open this page.</p>
      )}
      {home && (
        <Link href={home.href} className="inline-block text-blue-700 hover:underline">
          Back to {home.label}
        </Link>
      )}
    </div>
  );
}

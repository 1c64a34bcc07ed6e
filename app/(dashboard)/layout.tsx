import Link from "next/link";
import { getViewer } from "@/lib/auth/session";
import { SignOutButton } from "@/app/(auth)/sign-out-button";
import { Providers } from "@/components/dashboard/Providers";
import { NavLinks } from "@/components/dashboard/NavLinks";
import { navFor } from "@/components/dashboard/page-access";
import { ViewerTenantProvider, type ViewerTenant } from "@/components/dashboard/ViewerTenant";
import { getPrisma } from "@/lib/db/prisma";
import { PortalMarker } from "@/components/dashboard/PortalMarker";

/** A scoped viewer's district, named as the district knows itself ("Lincoln USD"); null for a global viewer. */
async function viewerTenant(tenantId: string | null | undefined): Promise<ViewerTenant> {
  if (!tenantId) return null;
  const t = await getPrisma().tenant.findUnique({ where: { id: tenantId }, select: { id: true, name: true } });
  return { id: tenantId, name: t?.name ?? tenantId };
}

export default async function DashboardLayout({ children }: { children: React.ReactNode }) {
  const viewer = await getViewer();
  const tenant = await viewerTenant(viewer?.tenantId);
  return (
    <Providers>
      <ViewerTenantProvider tenant={tenant}>
        <div className="min-h-screen">
          <a
            href="#main"
            className="sr-only focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:z-50 focus:rounded focus:bg-white focus:px-3 focus:py-2 focus:shadow"
          >
            Skip to content
          </a>
          <header className="border-b border-slate-200 bg-white">
            <div className="mx-auto flex max-w-7xl flex-wrap items-center gap-x-6 gap-y-2 px-4 py-3">
              <Link href="/" className="text-lg font-semibold tracking-tight text-slate-900">
                hookledger
              </Link>
              <div className="order-3 w-full min-w-0 sm:order-none sm:w-auto sm:flex-1">
                <NavLinks items={navFor(viewer)} />
              </div>
              {viewer && (
                // On a phone the account takes a row of its own under the name, so the district's name is not cut short.
                <div className="flex w-full min-w-0 flex-wrap items-center gap-x-3 gap-y-1 text-sm text-slate-700 sm:w-auto sm:justify-end">
                  {tenant && (
                    // A district's account sees its district only: say which, so nobody wonders where the other districts went.
                    <span
                      data-testid="viewer-tenant"
                      title={`Signed in for ${tenant.name} (${tenant.id}): you see this district's endpoints and deliveries only`}
                      className="max-w-full shrink-0 truncate rounded-md border border-blue-200 bg-blue-50 px-2 py-0.5 font-medium text-blue-900 sm:max-w-[16rem]"
                    >
                      {tenant.name}
                    </span>
                  )}
                  {viewer.kind === "portal" && viewer.portalExpiresAt ? (
                    // A district signed in through a portal link: no account to name, the session's end instead.
                    <PortalMarker expiresAt={viewer.portalExpiresAt.toISOString()} readOnly={viewer.role === "support"} />
                  ) : (
                    // The role stays visible however long the email: only the email is cut short.
                    <span className="flex min-w-[9rem] max-w-full items-center gap-1.5">
                      <span className="min-w-0 max-w-[14rem] truncate" title={viewer.email ?? viewer.actor}>
                        {viewer.email ?? viewer.actor.replace(/^user:/, "")}
                      </span>
                      <span className="shrink-0 rounded bg-slate-100 px-1.5 py-0.5 text-xs text-slate-700">{viewer.role}</span>
                    </span>
                  )}
                  <span className="shrink-0 whitespace-nowrap">
                    <SignOutButton to={viewer.kind === "portal" ? "/signin?portal=signed_out" : "/signin"} />
                  </span>
                </div>
              )}
            </div>
          </header>
          <main id="main" className="mx-auto max-w-7xl px-4 py-6">
            {children}
          </main>
        </div>
      </ViewerTenantProvider>
    </Providers>
  );
}

"use client";
// The district the signed-in viewer is confined to (null: a global viewer),
// given once by the dashboard layout so every client component can adapt
// without each page passing it down: a scoped viewer is not offered a tenant
// picker, a tenant-less subscription, `*`, or links to global-only pages.
// A courtesy only: the server confines every read and write (lib/tenants/scope.ts).
import { createContext, useContext } from "react";

export type ViewerTenant = { id: string; name: string } | null;

const Ctx = createContext<ViewerTenant>(null);

export function ViewerTenantProvider({ tenant, children }: { tenant: ViewerTenant; children: React.ReactNode }) {
  return <Ctx.Provider value={tenant}>{children}</Ctx.Provider>;
}

/** The viewer's district, or null for a global viewer. */
export function useViewerTenant(): ViewerTenant {
  return useContext(Ctx);
}

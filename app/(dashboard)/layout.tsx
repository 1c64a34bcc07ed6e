import Link from "next/link";
import { getViewer } from "@/lib/auth/session";
import { SignOutButton } from "@/app/(auth)/sign-out-button";
import { Providers } from "@/components/dashboard/Providers";
import { NavLinks } from "@/components/dashboard/NavLinks";

export default async function DashboardLayout({ children }: { children: React.ReactNode }) {
  const viewer = await getViewer();
  return (
    <Providers>
      <div className="min-h-screen">
        <a href="#main" className="sr-only focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:z-50 focus:rounded focus:bg-white focus:px-3 focus:py-2 focus:shadow">
          Skip to content
        </a>
        <header className="border-b border-slate-200 bg-white">
          <div className="mx-auto flex max-w-7xl flex-wrap items-center gap-x-6 gap-y-2 px-4 py-3">
            <Link href="/" className="text-lg font-semibold tracking-tight text-slate-900">
              hookledger
            </Link>
            <div className="order-3 w-full min-w-0 sm:order-none sm:w-auto sm:flex-1">
              <NavLinks />
            </div>
            {viewer && (
              <div className="ml-auto flex items-center gap-3 text-sm text-slate-700 sm:ml-0">
                <span className="max-w-[14rem] truncate" title={viewer.email ?? viewer.actor}>
                  {viewer.email ?? viewer.actor.replace(/^user:/, "")} <span className="rounded bg-slate-100 px-1.5 py-0.5 text-xs text-slate-700">{viewer.role}</span>
                </span>
                <SignOutButton />
              </div>
            )}
          </div>
        </header>
        <main id="main" className="mx-auto max-w-7xl px-4 py-6">
          {children}
        </main>
      </div>
    </Providers>
  );
}

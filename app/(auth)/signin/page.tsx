import { redirect } from "next/navigation";
import { getPrisma } from "@/lib/db/prisma";
import { getViewer } from "@/lib/auth/session";
import { countUsers } from "@/lib/auth/users";
import { firstAdminCommandForServer } from "@/lib/auth/startup";
import { safeNext } from "@/lib/auth/signin";
import { SignInForm } from "./signin-form";
import { PortalNotice, portalNoticeReason } from "./portal-notice";

export const dynamic = "force-dynamic";
export const metadata = { title: "Sign in" };

export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const sp = await searchParams;
  const next = safeNext(typeof sp.next === "string" ? sp.next : undefined);
  // A portal link that did not open: its reason, even in a browser already signed in (no session was made from it).
  const portal = portalNoticeReason(sp.portal);
  if (portal) return <PortalNotice reason={portal} />;
  if (await getViewer()) redirect(next);
  const users = await countUsers(getPrisma());
  return (
    <div>
      <h1 className="text-2xl font-semibold tracking-tight">Sign in to hookledger</h1>
      <p className="mt-1 text-sm text-slate-600">Webhook deliveries, their receipts and the dead-letter queue.</p>
      {users === 0 ? (
        <div role="note" className="mt-6 rounded-md border border-amber-300 bg-amber-50 p-4 text-sm text-amber-900">
          <p className="font-medium">No users yet.</p>
          <p className="mt-1">Create the first admin on the server, then sign in with the password it prints:</p>
          <pre className="mt-2 whitespace-pre-wrap break-all rounded bg-white px-2 py-1 font-mono text-xs text-slate-900" data-testid="first-admin-command">
            {firstAdminCommandForServer()}
          </pre>
        </div>
      ) : null}
      <SignInForm next={next} />
    </div>
  );
}

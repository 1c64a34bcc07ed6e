import { redirect } from "next/navigation";
import { getViewer } from "@/lib/auth/session";
import { safeNext } from "@/lib/auth/signin";
import { PasswordForm } from "./password-form";

export const dynamic = "force-dynamic";
export const metadata = { title: "Change password" };

export default async function PasswordPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const sp = await searchParams;
  const next = safeNext(typeof sp.next === "string" ? sp.next : undefined);
  const viewer = await getViewer();
  if (!viewer) redirect(`/signin?next=${encodeURIComponent("/password")}`);
  return (
    <div>
      <h1 className="text-2xl font-semibold tracking-tight">{viewer.mustChangePassword ? "Choose your password" : "Change your password"}</h1>
      <p className="mt-1 text-sm text-slate-600">
        {viewer.mustChangePassword
          ? "An admin set the password you signed in with. Choose your own (at least 12 characters) to continue."
          : "At least 12 characters. Every other session of yours is signed out."}
      </p>
      <p className="mt-1 text-sm text-slate-600">Signed in as {viewer.email}.</p>
      <PasswordForm next={next} />
    </div>
  );
}

import { getPool } from "@/lib/db/pool";
import { requireViewer } from "@/lib/auth/session";
import { getRetentionOverview } from "@/lib/retention/run-retention";
import { RetentionSection } from "@/components/admin/RetentionSection";
import { AdminNav } from "../nav";

export const dynamic = "force-dynamic";
export const metadata = { title: "Retention" };

export default async function RetentionPage() {
  await requireViewer("retention.read");
  return (
    <>
      <AdminNav current="/admin/retention" global />
      <RetentionSection overview={await getRetentionOverview(getPool())} />
    </>
  );
}

import Link from "next/link";
import { getPrisma } from "@/lib/db/prisma";
import { listSubscriptions } from "@/lib/subscriptions/service";

export const dynamic = "force-dynamic";

export default async function SubscriptionsPage() {
  const subs = await listSubscriptions(getPrisma());
  return (
    <section>
      <h1 className="text-2xl font-semibold">Subscriptions</h1>
      {subs.length === 0 ? (
        <p className="mt-4 text-slate-600">No subscriptions yet. Create one with POST /api/v1/subscriptions.</p>
      ) : (
        <table className="mt-4 w-full text-left text-sm">
          <thead className="text-slate-500">
            <tr>
              <th className="py-2">Name</th>
              <th className="py-2">District</th>
              <th className="py-2">State</th>
              <th className="py-2">Target</th>
            </tr>
          </thead>
          <tbody>
            {subs.map((s) => (
              <tr key={s.id} className="border-t border-slate-200">
                <td className="py-2">
                  <Link href={`/subscriptions/${s.id}`} className="font-medium text-blue-700 hover:underline">
                    {s.name}
                  </Link>
                  <div className="font-mono text-xs text-slate-500">{s.id}</div>
                </td>
                <td className="py-2">{s.tenant ?? "all"}</td>
                <td className="py-2">{s.state}</td>
                <td className="py-2 font-mono text-xs">{s.url}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

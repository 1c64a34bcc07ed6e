// The demo stack: for now a seeded subscription; the demo issue adds simulated
// districts and live traffic.
import { createPrisma } from "../lib/db/prisma";

export async function startDemo(opts: { databaseUrl: string; dashboardUrl: string }) {
  const prisma = createPrisma(opts.databaseUrl);
  await prisma.subscription.upsert({
    where: { id: "sub_demo" },
    update: {},
    create: { id: "sub_demo", name: "Demo district", tenant: "demo", url: "http://127.0.0.1:9/hook", eventTypes: ["assignment.graded"] },
  });
  console.log(`Demo: seeded subscription sub_demo. Open ${opts.dashboardUrl}`);
  return { stop: () => prisma.$disconnect() };
}

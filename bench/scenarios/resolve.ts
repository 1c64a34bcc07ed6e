// Bulk resolve: seed dead letters on one subscription (and a few on another,
// which the filter must leave), then resolve them with lib/resolve's
// resolveDeadLetters (the service behind POST /api/v1/dlq/resolve and
// `hookledger resolve`): chunks of one guarded statement each, one
// transaction, an audit row per delivery. Target: 100,000 commit in under 10 s.
import pg from "pg";
import type { BenchPg } from "../lib/pg";
import { createSubs, seedDeliveries } from "../lib/seed";
import { round } from "../lib/stats";
import { createPrisma } from "../../lib/db/prisma";
import { resolveDeadLetters } from "../../lib/resolve/resolve-and-resend";
import { RESOLVE_CHUNK } from "../../lib/ledger/sql/resolve";
import { SYSTEM } from "../../lib/auth/principal";

export async function runBulkResolve(benchPg: BenchPg, opts: { deadLetters: number }) {
  const url = await benchPg.create("resolve");
  const db = new pg.Pool({ connectionString: url, max: 3 });
  db.on("error", () => {});
  const prisma = createPrisma(url);
  try {
    await createSubs(db, [
      { id: "sub_gone", url: "http://127.0.0.1:9/gone", tenant: "westfield" },
      { id: "sub_other", url: "http://127.0.0.1:9/other", tenant: "lincoln" },
    ]);
    await seedDeliveries(db, { prefix: "gone_", count: opts.deadLetters, subs: ["sub_gone"], state: "dead_letter", attemptCount: 1 });
    await seedDeliveries(db, { prefix: "other_", count: Math.max(10, Math.round(opts.deadLetters / 100)), subs: ["sub_other"], state: "dead_letter", attemptCount: 1 });
    await db.query("VACUUM ANALYZE");
    const t0 = performance.now();
    const r = await resolveDeadLetters(prisma, { filter: { subscriptionId: "sub_gone" }, resolution: "discarded", reason: "bench: endpoint decommissioned" }, SYSTEM);
    const seconds = (performance.now() - t0) / 1000;
    const { rows } = await db.query<{ resolved: number; left: number; other: number; audited: number }>(
      `SELECT (SELECT count(*)::int FROM deliveries WHERE subscription_id = 'sub_gone' AND state = 'resolved') AS resolved,
              (SELECT count(*)::int FROM deliveries WHERE subscription_id = 'sub_gone' AND state = 'dead_letter') AS left,
              (SELECT count(*)::int FROM deliveries WHERE subscription_id = 'sub_other' AND state = 'dead_letter') AS other,
              (SELECT count(*)::int FROM audit_entries WHERE action = 'delivery.resolve') AS audited`,
    );
    const c = rows[0];
    if (r.resolved !== opts.deadLetters || c.resolved !== opts.deadLetters || c.left !== 0 || c.audited !== opts.deadLetters)
      throw new Error(`bulk resolve moved ${r.resolved} (ledger: ${c.resolved} resolved, ${c.left} left, ${c.audited} audit rows) of ${opts.deadLetters}`);
    return {
      deadLetters: opts.deadLetters,
      seconds: round(seconds, 2),
      perSecond: Math.round(opts.deadLetters / seconds),
      // The id read, then one guarded UPDATE (with its audit rows) per chunk.
      statements: Math.ceil(opts.deadLetters / RESOLVE_CHUNK) + 1,
      untouchedOtherSubscription: c.other,
      targetSeconds: 10,
      meetsTarget: seconds < 10,
    };
  } finally {
    await prisma.$disconnect().catch(() => {});
    await db.end().catch(() => {});
  }
}

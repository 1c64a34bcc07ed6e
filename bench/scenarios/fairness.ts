// 5. Fairness: healthy subscriptions drain a backlog with and without one bad
// endpoint that holds every request until the worker's 10 s timeout, with
// 10,000 deliveries queued for it. The bad endpoint is a second receiver (its
// own origin, as a real district's would be), so it does not share the
// healthy ones' connection pool by construction.
import pg from "pg";
import type { BenchPg } from "../lib/pg";
import type { Receiver } from "../lib/proc";
import { createSubs, countState, pollUntil, seedDeliveries } from "../lib/seed";
import { startWorkers } from "../lib/workers";
import { medianBy, round } from "../lib/stats";

async function healthyDrain(
  benchPg: BenchPg,
  healthyRx: Receiver,
  badRx: Receiver | null,
  opts: { healthy: number; healthySubs: number; bad: number; timeoutMs: number; label: string },
) {
  const url = await benchPg.create(`fair_${opts.label}`);
  const db = new pg.Pool({ connectionString: url, max: 3 });
  db.on("error", () => {});
  const subs = Array.from({ length: opts.healthySubs }, (_, i) => `ok_${String(i + 1).padStart(2, "0")}`);
  await createSubs(db, subs.map((id) => ({ id, url: healthyRx.url(`ok/${id}`), state: "paused", tenant: id })));
  if (badRx) {
    await createSubs(db, [{ id: "bad", url: badRx.url("hang/bad"), state: "paused", tenant: "bad", retryPolicy: { timeoutMs: 10_000 } }]);
    await seedDeliveries(db, { prefix: "bad_", count: opts.bad, subs: ["bad"] });
  }
  await seedDeliveries(db, { prefix: "ok_", count: opts.healthy, subs });
  await db.query("VACUUM ANALYZE");
  await db.query("CHECKPOINT").catch(() => {});
  const workers = await startWorkers(db, url, 1);
  try {
    await db.query("UPDATE subscriptions SET state = 'active'");
    await db.query("SELECT pg_notify('hookledger_deliveries', '')");
    const done = await pollUntil(async () => (await countState(db, "delivered", subs)) >= opts.healthy, opts.timeoutMs, 100);
    const { rows } = await db.query(
      `SELECT (SELECT min(started_at) FROM attempts WHERE subscription_id <> 'bad') AS first,
              (SELECT max(delivered_at) FROM deliveries WHERE subscription_id <> 'bad') AS last,
              (SELECT count(*)::int FROM deliveries WHERE subscription_id <> 'bad' AND state = 'delivered') AS delivered,
              (SELECT count(*)::int FROM deliveries WHERE subscription_id = 'bad' AND state = 'in_flight') AS bad_in_flight`,
    );
    const r = rows[0];
    const seconds = (r.last.getTime() - r.first.getTime()) / 1000;
    return { completed: done, healthyDelivered: r.delivered, seconds: round(seconds, 2), perSecond: round(r.delivered / seconds), badInFlightAtEnd: r.bad_in_flight };
  } finally {
    await workers.stop();
    await db.end();
    await benchPg.drop(url);
  }
}

type Drain = Awaited<ReturnType<typeof healthyDrain>>;

export async function runFairness(
  benchPg: BenchPg,
  receiver: Receiver,
  badReceiver: Receiver,
  opts: { healthy: number; healthySubs: number; bad: number; timeoutMs: number; rounds?: number },
) {
  // The figure is a ratio of two drains, so it carries the machine's swings
  // from one minute to the next twice. Rounds alternate which drain goes
  // first; the median of the paired ratios is reported, with every round.
  const rounds: { alone: Drain; withBad: Drain; keptPct: number }[] = [];
  for (let i = 0; i < (opts.rounds ?? 1); i++) {
    const first = i % 2 === 0 ? "alone" : "with_bad";
    const a = await healthyDrain(benchPg, receiver, first === "alone" ? null : badReceiver, { ...opts, label: `${first}_${i + 1}` });
    const b = await healthyDrain(benchPg, receiver, first === "alone" ? badReceiver : null, { ...opts, label: `${first === "alone" ? "with_bad" : "alone"}_${i + 1}` });
    const [alone, withBad] = first === "alone" ? [a, b] : [b, a];
    rounds.push({ alone, withBad, keptPct: round((100 * withBad.perSecond) / alone.perSecond, 1) });
  }
  const { alone, withBad, keptPct } = medianBy(rounds, (r) => r.keptPct);
  return {
    worker: "one process: node bin/hookledger.mjs worker; defaults (max_concurrency 10 per subscription)",
    healthySubscriptions: opts.healthySubs,
    healthyDeliveries: opts.healthy,
    badEndpoint: { deliveriesQueued: opts.bad, behaviour: "reads the request, never answers; subscription timeoutMs 10000" },
    alone,
    withBad,
    keptPct,
    rounds: rounds.length > 1 ? rounds.map((r) => ({ alonePerSecond: r.alone.perSecond, withBadPerSecond: r.withBad.perSecond, keptPct: r.keptPct })) : undefined,
    targetPct: 90,
  };
}

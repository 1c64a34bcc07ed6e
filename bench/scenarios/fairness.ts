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
import { wakeWorkers } from "../../lib/ledger/sql/enqueue";
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
  await createSubs(
    db,
    subs.map((id) => ({ id, url: healthyRx.url(`ok/${id}`), state: "paused", tenant: id })),
  );
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
    await wakeWorkers(db); // fixtures do not NOTIFY
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
  // The figure is a ratio of two drains, so it carries the machine's speed
  // twice, and that speed drifts by tens of percent within minutes. The drains
  // alternate, alone first and last (alone, with, alone, with, …, alone), and
  // each drain with the bad endpoint is held against the mean of the alone
  // drains on either side of it, which cancels a drift across the three. The
  // median of those bracketed ratios is reported, with every one.
  const n = opts.rounds ?? 1;
  const alones: Drain[] = [];
  const withs: Drain[] = [];
  for (let i = 0; i < n; i++) {
    alones.push(await healthyDrain(benchPg, receiver, null, { ...opts, label: `alone_${i + 1}` }));
    withs.push(await healthyDrain(benchPg, receiver, badReceiver, { ...opts, label: `with_bad_${i + 1}` }));
  }
  alones.push(await healthyDrain(benchPg, receiver, null, { ...opts, label: `alone_${n + 1}` }));
  const rounds = withs.map((withBad, i) => {
    const bracket = [alones[i].perSecond, alones[i + 1].perSecond];
    const alone = { ...alones[i], completed: alones[i].completed && alones[i + 1].completed, perSecond: round((bracket[0] + bracket[1]) / 2), bracket };
    return { alone, withBad, keptPct: round((100 * withBad.perSecond) / alone.perSecond, 1) };
  });
  const { alone, withBad, keptPct } = medianBy(rounds, (r) => r.keptPct);
  return {
    worker: "one process: node bin/hookledger.mjs worker; defaults (max_concurrency 10 per subscription)",
    healthySubscriptions: opts.healthySubs,
    healthyDeliveries: opts.healthy,
    badEndpoint: { deliveriesQueued: opts.bad, behaviour: "reads the request, never answers; subscription timeoutMs 10000" },
    alone,
    withBad,
    keptPct,
    rounds: rounds.map((r) => ({ alonePerSecond: r.alone.perSecond, aloneBracket: r.alone.bracket, withBadPerSecond: r.withBad.perSecond, keptPct: r.keptPct })),
    targetPct: 90,
  };
}

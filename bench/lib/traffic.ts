// Fresh traffic at a fixed offered rate: every tick, the events owed since the
// start are published (batched SQL, as a producer's own transactions would
// write them) with NOTIFY, like publishEvent. Bounded by `maxEvents`.
import pg from "pg";
import { seedDeliveries } from "./seed";

export type Traffic = { stop: () => Promise<{ published: number; seconds: number; perSecond: number }>; published: () => number };

export function startTraffic(url: string, opts: { ratePerSecond: number; subs: string[]; prefix: string; maxEvents: number; tickMs?: number }): Traffic {
  const db = new pg.Pool({ connectionString: url, max: 1 });
  db.on("error", () => {});
  const tick = opts.tickMs ?? 50;
  const t0 = performance.now();
  let published = 0;
  let busy = false;
  let stopped = false;
  let last: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    if (busy || stopped) return;
    const owed = Math.min(opts.maxEvents, Math.floor(((performance.now() - t0) / 1000) * opts.ratePerSecond)) - published;
    if (owed <= 0) return;
    busy = true;
    const from = published;
    published += owed;
    last = seedDeliveries(db, { prefix: `${opts.prefix}${from}_`, count: owed, subs: opts.subs, payloadBytes: 1024 })
      .catch((err) => console.error(`traffic: ${(err as Error).message}`))
      .finally(() => (busy = false));
  }, tick);
  return {
    published: () => published,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await last;
      const seconds = (performance.now() - t0) / 1000;
      await db.end();
      return { published, seconds: Math.round(seconds * 100) / 100, perSecond: Math.round(published / seconds) };
    },
  };
}

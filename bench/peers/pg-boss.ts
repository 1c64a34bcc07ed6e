// The webhook drain on pg-boss 10, in a process of its own (bench/peers/run.ts
// starts it with PEER_CONFIG). One queue; `work()` called `workers` times, each
// fetching `batchSize` jobs and sending them `sendsPerWorker` at a time. pg-boss
// 10 dropped teamSize/teamConcurrency; its maintainer's answer for concurrency
// is a batch handled with Promise.allSettled, with p-map or the like to cap it,
// and more work() calls for more pollers. A batch's failed jobs are failed by
// id, so the queue retries only those; pg-boss completes the rest when the
// handler returns. A batch is one unit: its poller fetches again only when the
// batch's last request has ended.
//
// pg-boss's poller sleeps out the rest of `pollingIntervalSeconds` (0.5 s at
// the least) after every batch, even when jobs are waiting. Its documented
// notifyWorker(id) skips that sleep; the handler calls it when its batch came
// back full, so a backlog is fetched back to back and an idle queue is still
// polled every 0.5 s.
import PgBoss from "pg-boss";
import { runPeerProcess, webhookJob, type PeerConfig, type WebhookJob } from "./webhook";

const QUEUE = "webhooks";

/** Promise.allSettled over `items`, at most `limit` of them running at once (what p-map's concurrency option does). */
async function settleLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<PromiseSettledResult<void>[]> {
  const results: PromiseSettledResult<void>[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      try {
        results[i] = { status: "fulfilled", value: await fn(items[i]) };
      } catch (reason) {
        results[i] = { status: "rejected", reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}
let boss: PgBoss;
let cfg: PeerConfig;

await runPeerProcess({
  async setup(c) {
    cfg = c;
    boss = new PgBoss({ connectionString: cfg.databaseUrl, max: Number(cfg.settings.poolSize) });
    boss.on("error", (err) => console.error(`pg-boss: ${err.message}`));
    await boss.start();
    await boss.createQueue(QUEUE);
    // insert() writes a whole array in one statement; chunks keep each statement's JSON to a few MB.
    for (let from = 0; from < cfg.jobs; from += 2_000) {
      const jobs: PgBoss.JobInsert<WebhookJob>[] = [];
      for (let g = from + 1; g <= Math.min(cfg.jobs, from + 2_000); g++) jobs.push({ name: QUEUE, data: webhookJob(g, cfg.endpoints) });
      await boss.insert(jobs);
    }
  },

  async start(sender) {
    const batchSize = Number(cfg.settings.batchSize);
    const sendsPerWorker = Number(cfg.settings.sendsPerWorker);
    const workerIds: string[] = [];
    for (let i = 0; i < Number(cfg.settings.workers); i++) {
      const slot = i;
      workerIds.push(
        await boss.work<WebhookJob>(QUEUE, { batchSize, pollingIntervalSeconds: Number(cfg.settings.pollingIntervalSeconds) }, async (jobs) => {
          const results = await settleLimited(jobs, sendsPerWorker, (job) => sender.send(job.data));
          const failed = jobs.filter((_, k) => results[k].status === "rejected").map((job) => job.id);
          if (failed.length) await boss.fail(QUEUE, failed);
          if (jobs.length === batchSize && cfg.settings.notifyOnFullBatch && workerIds[slot]) boss.notifyWorker(workerIds[slot]);
        }),
      );
    }
    // complete() is not awaited by pg-boss's poller: done is when the database says so, not when the last 2xx came back.
    const done = (async () => {
      for (;;) {
        if (sender.stats.ok >= cfg.jobs) {
          const { rows } = await boss
            .getDb()
            .executeSql(`SELECT count(*)::int AS n, max(completed_on) AS at FROM pgboss.job WHERE name = $1 AND state = 'completed'`, [QUEUE]);
          if (rows[0].n >= cfg.jobs) return (rows[0].at as Date).getTime();
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    return { done, stop: () => boss.stop({ graceful: true, wait: true, timeout: 5_000 }) };
  },

  async check() {
    const { rows } = await boss.getDb().executeSql(`SELECT state, count(*)::int AS n FROM pgboss.job WHERE name = $1 GROUP BY state`, [QUEUE]);
    return Object.fromEntries(rows.map((r) => [r.state as string, r.n as number]));
  },
});

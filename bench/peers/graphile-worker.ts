// The webhook drain on graphile-worker 0.16, in a process of its own
// (bench/peers/run.ts starts it with PEER_CONFIG). One task, `concurrency`
// jobs at once in one process: each of its concurrent workers takes one job,
// runs it and asks for the next as soon as it is done (the pool LISTENs for
// new jobs; pollInterval only matters for an idle queue).
//
// No job queues (`queue_name`): jobs in a named queue run one at a time, in
// order, so a queue per endpoint would deliver to each endpoint serially, a
// guarantee hookledger does not give (it caps an endpoint at max_concurrency,
// 10 in the drain) and a slower one. graphile-worker's own perfTest runs
// without them too.
import { EventEmitter } from "node:events";
import pg from "pg";
import { Logger, run, runMigrations, type Runner, type WorkerEvents } from "graphile-worker";
import { runPeerProcess, webhookJob, type PeerConfig, type WebhookJob } from "./webhook";

// Warnings and errors only, as the hookledger worker runs in the bench (LOG_LEVEL=warn).
const logger = new Logger(() => (level, message) => {
  if (level === "warning" || level === "error") console.error(`graphile-worker ${level}: ${message}`);
});
// graphile-worker formats a line per completed job unless this is set (its own perfTest sets it too).
process.env.NO_LOG_SUCCESS = "1";

let pool: pg.Pool;
let cfg: PeerConfig;

await runPeerProcess({
  async setup(c) {
    cfg = c;
    pool = new pg.Pool({ connectionString: cfg.databaseUrl, max: Number(cfg.settings.poolSize) });
    await runMigrations({ pgPool: pool, logger });
    // graphile_worker.add_jobs: its bulk insert, one statement per chunk.
    for (let from = 0; from < cfg.jobs; from += 2_000) {
      const specs: { identifier: string; payload: WebhookJob }[] = [];
      for (let g = from + 1; g <= Math.min(cfg.jobs, from + 2_000); g++) specs.push({ identifier: "webhook", payload: webhookJob(g, cfg.endpoints) });
      await pool.query(`SELECT graphile_worker.add_jobs(ARRAY(SELECT j FROM json_populate_recordset(null::graphile_worker.job_spec, $1::json) j))`, [
        JSON.stringify(specs),
      ]);
    }
  },

  async start(sender) {
    let completed = 0;
    let resolveDone: (at: number) => void = () => {};
    const done = new Promise<number>((resolve) => (resolveDone = resolve));
    // job:complete is emitted after the job's row is deleted (completeJob has resolved): the job is recorded done.
    const events: WorkerEvents = new EventEmitter();
    events.on("job:complete", ({ error }) => {
      if (error) return;
      if (++completed >= cfg.jobs) resolveDone(Date.now());
    });
    const runner: Runner = await run({
      pgPool: pool,
      concurrency: Number(cfg.settings.concurrency),
      pollInterval: Number(cfg.settings.pollInterval),
      useNodeTime: Boolean(cfg.settings.useNodeTime),
      noPreparedStatements: !cfg.settings.preparedStatements,
      noHandleSignals: true,
      logger,
      events,
      taskList: { webhook: (payload) => sender.send(payload as WebhookJob) },
    });
    return {
      done,
      stop: async () => {
        await runner.stop();
        await pool.end();
      },
    };
  },

  async check() {
    const { rows } = await pool.query(
      `SELECT count(*)::int AS left, count(*) FILTER (WHERE attempts >= max_attempts)::int AS perma_failed FROM graphile_worker._private_jobs`,
    );
    return { left: rows[0].left, permaFailed: rows[0].perma_failed, completed: cfg.jobs - rows[0].left };
  },
});

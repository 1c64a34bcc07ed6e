// A reference for the database side: how long one small committed write takes
// on this machine, with synchronous_commit on (the WAL flush every commit
// waits for) and off. Sequential, one connection.
import pg from "pg";
import type { BenchPg } from "../lib/pg";
import { summary } from "../lib/stats";

export async function runCommitLatency(benchPg: BenchPg, opts: { commits: number }) {
  const url = await benchPg.create("commit");
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query("CREATE TABLE bench_commit (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())");
    const run = async () => {
      const ms: number[] = [];
      for (let i = 0; i < opts.commits; i++) {
        const t = performance.now();
        await c.query("INSERT INTO bench_commit DEFAULT VALUES");
        ms.push(performance.now() - t);
      }
      return summary(ms);
    };
    await run();
    const on = await run();
    await c.query("SET synchronous_commit = off");
    const off = await run();
    return { commits: opts.commits, synchronousCommitOnMs: on, synchronousCommitOffMs: off };
  } finally {
    await c.end();
    await benchPg.drop(url);
  }
}

// Real worker processes: `node bin/hookledger.mjs worker` with DATABASE_URL,
// exactly what an operator runs. Ready when each has written its heartbeat.
import path from "node:path";
import type pg from "pg";
import { startChild, type Child } from "./proc";
import { pollUntil } from "./seed";

export type WorkerSet = {
  children: Child[];
  /** Peak RSS (VmHWM) of each worker process, MB. */
  peakRssMb: () => (number | null)[];
  stop: () => Promise<void>;
};

export async function startWorkers(
  db: pg.Pool,
  url: string,
  n: number,
  opts: { env?: Record<string, string | undefined>; cpuProfDir?: string } = {},
): Promise<WorkerSet> {
  const { rows } = await db.query("SELECT count(*)::int AS n FROM worker_heartbeats WHERE stopped_at IS NULL");
  const before = rows[0].n as number;
  const children: Child[] = [];
  for (let i = 0; i < n; i++) {
    children.push(
      startChild(["bin/hookledger.mjs", "worker"], {
        name: `worker ${i + 1}`,
        nodeArgs: opts.cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(opts.cpuProfDir)}`] : [],
        env: {
          DATABASE_URL: url,
          HOOKLEDGER_ALLOW_PRIVATE_TARGETS: "1",
          LOG_LEVEL: "warn",
          HOOKLEDGER_SHUTDOWN_GRACE_MS: "1000",
          HOOKLEDGER_HEARTBEAT_MS: "1000",
          HOOKLEDGER_METRICS_PORT: "",
          ...opts.env,
        },
      }),
    );
  }
  const ok = await pollUntil(
    async () => (await db.query("SELECT count(*)::int AS n FROM worker_heartbeats WHERE stopped_at IS NULL")).rows[0].n >= before + n,
    60_000,
    100,
  );
  if (!ok) {
    await Promise.all(children.map((c) => c.stop(1000)));
    throw new Error(`worker processes did not start within 60 s:\n${children.map((c) => c.tail()).join("\n---\n")}`);
  }
  return {
    children,
    peakRssMb: () => children.map((c) => c.peakRssMb()),
    stop: async () => {
      await Promise.all(children.map((c) => c.stop(8_000)));
    },
  };
}

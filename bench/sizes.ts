// Sizes per mode. Full: the numbers. Quick: the same shapes, smaller,
// for development (< 2 min). Tiny: seconds, for test/bench-smoke.test.ts.
export type Mode = "full" | "quick" | "tiny";

export function sizesFor(mode: Mode) {
  const full = mode === "full";
  const tiny = mode === "tiny";
  return {
    hardLimitSeconds: full ? 14.5 * 60 : tiny ? 280 : 180,
    ceiling: { requests: full ? 100_000 : tiny ? 2_000 : 20_000, concurrency: 200, connections: 50 },
    drain: { deliveries: full ? 40_000 : tiny ? 1_000 : 10_000, subscriptions: 20, timeoutMs: full ? 120_000 : 40_000 },
    drainWorkers: tiny ? [1] : [1, 2, 4],
    /** The one-worker drain (the target) is run this many times, each after its own ceiling measurement; the median is reported. */
    drainRepeats: full ? 3 : 1,
    cronSweepSeconds: full ? 20 : tiny ? 1 : 4,
    retry: {
      retries: full ? 5_000 : tiny ? 100 : 1_000,
      spreadSeconds: full ? 30 : tiny ? 2 : 8,
      freshPerSecond: full ? 2_000 : tiny ? 200 : 2_000,
      subscriptions: 20,
      leadInSeconds: tiny ? 1 : 3,
    },
    // rounds: drains with the bad endpoint, each between two without it (bench/scenarios/fairness.ts); the median ratio is the figure.
    fairness: {
      healthy: full ? 30_000 : tiny ? 500 : 5_000,
      healthySubs: 10,
      bad: full ? 10_000 : tiny ? 100 : 2_000,
      timeoutMs: full ? 90_000 : 40_000,
      rounds: full ? 3 : 1,
    },
    redrive: {
      deadLetters: full ? 10_000 : tiny ? 100 : 2_000,
      ratePerSecond: full ? 500 : tiny ? 100 : 500,
      freshPerSecond: full ? 2_000 : tiny ? 200 : 1_000,
      baselineSeconds: full ? 10 : tiny ? 1 : 4,
      subscriptions: 10,
    },
    ingest: { events: full ? 20_000 : tiny ? 200 : 2_000, concurrency: 32 },
    // hookledger's one-worker drain, pg-boss and graphile-worker on the same jobs, `rounds` times each (bench/peers/run.ts); the medians are compared.
    // The timeout is per system and round: graphile-worker drains at ~1,000/s on this machine, ~300/s when it is busy.
    peers: { jobs: full ? 40_000 : tiny ? 300 : 5_000, endpoints: 20, rounds: full ? 3 : 1, timeoutMs: full ? 180_000 : 60_000 },
    // The endpoints step (bench/scenarios/endpoints.ts): one backlog drained four ways, alternated; --deliveries and --idle override.
    // The idle subscriptions are inserted in SQL unless --idle-via api: the create route did ~30/s at 8 in flight on a loaded
    // 2-core machine (a Prisma transaction with its audit row each), about half an hour for 50,000.
    endpoints: {
      deliveries: full ? 40_000 : tiny ? 400 : 10_000,
      idle: full ? [5_000, 50_000] : tiny ? [200] : [5_000, 20_000],
      perSpreadEndpoint: 8,
      rounds: full ? 2 : 1,
      timeoutMs: full ? 180_000 : 60_000,
      idleVia: "sql" as "api" | "sql",
    },
    // Idle subscriptions beside the same small due work (bench/loops.ts); the figure is the largest size's time per run over the smallest's.
    loops: { subscriptions: full ? [20, 5_000, 50_000] : tiny ? [20, 200, 2_000] : [20, 2_000, 20_000], runs: full ? 15 : tiny ? 2 : 7 },
    dashboard: { events: full ? 500_000 : tiny ? 2_000 : 50_000, subscriptions: 200, iterations: full ? 100 : tiny ? 5 : 30 },
  };
}
export type Sizes = ReturnType<typeof sizesFor>;

// The hot path is one statement at a time (worker/worker.ts loop): run side by
// side, the claim and the result write contended inside Postgres and cost ~25%
// more database CPU per delivery, and under load each cycle writes the results
// and claims the next batch in one statement, one commit (BENCHMARKS.md F1).
// A real drain against a real receiver; the worker's pool is watched for which
// hot-path statements run and how many at once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { createSub, FAST, seedEvents, startReceiver, waitFor, type Receiver } from "../helpers/worker-helpers";
import { DeliveryWorker } from "../../worker/worker";

let db: TestDb;
let r: Receiver;
/** Requests open at the receiver per subscription (its path), and the most seen at once. */
const open = new Map<string, number>();
let maxOpen = 0;
beforeAll(async () => {
  db = await createTestDatabase();
  // Answers within a few milliseconds, unevenly: results come back while claims run.
  r = await startReceiver(async (req, res) => {
    const path = req.url ?? "";
    const n = (open.get(path) ?? 0) + 1;
    open.set(path, n);
    maxOpen = Math.max(maxOpen, n);
    await new Promise((x) => setTimeout(x, Math.floor(Math.random() * 4)));
    open.set(path, open.get(path)! - 1);
    res.writeHead(204).end();
  });
});
afterAll(async () => {
  await r?.close();
  await db?.close();
});

describe("hot path", () => {
  it("runs one hot-path statement at a time, writes and claims in one statement under load, holds the cap and drains everything", async () => {
    const subs = Array.from({ length: 10 }, (_, i) => `sub_turn_${i}`);
    // A small cap: slots change hands (a finished request passing its slot to a prefetched row) many times a second.
    for (const id of subs) await createSub(db.pool, { id, url: `${r.url}/${id}`, maxConcurrency: 3 });
    await seedEvents(db.pool, "evt_turn_", 200, subs); // 200 events × 10 subscriptions

    const w = new DeliveryWorker({ databaseUrl: db.url, ...FAST });
    const kind = (q: unknown) => {
      const text = typeof q === "string" ? q : ((q as { text?: string })?.text ?? "");
      const write = text.includes("json_to_recordset");
      const claim = text.includes("subs AS MATERIALIZED");
      return write && claim ? "both" : write ? "write" : claim ? "claim" : null;
    };
    let running = 0;
    let maxRunning = 0;
    const seen = { claim: 0, write: 0, both: 0 };
    // Every connection the worker's pool opens is watched (the cycle runs on a checked-out client).
    w.pool.on("connect", (client) => {
      const query = client.query.bind(client) as (...a: unknown[]) => Promise<unknown>;
      (client as unknown as { query: (...a: unknown[]) => Promise<unknown> }).query = async (...args: unknown[]) => {
        const k = kind(args[0]);
        if (!k) return query(...args);
        seen[k]++;
        maxRunning = Math.max(maxRunning, ++running);
        try {
          return await query(...args);
        } finally {
          running--;
        }
      };
    });
    w.start();
    try {
      await waitFor(
        async () => {
          const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE subscription_id = ANY($1) AND state = 'delivered'", [subs]);
          return rows[0].n === 2_000;
        },
        60_000,
        "2,000 deliveries delivered",
      );
    } finally {
      await w.stop();
    }
    expect(seen.claim).toBeGreaterThan(0); // the first claim, with nothing to write yet
    expect(seen.both).toBeGreaterThan(5);
    expect(maxRunning).toBe(1);
    expect(maxOpen).toBe(3); // each subscription's cap reached and held, with rows prefetched and slots handed over
    const { rows } = await db.pool.query("SELECT count(*)::int AS n, count(DISTINCT delivery_id)::int AS d FROM attempts WHERE subscription_id = ANY($1)", [subs]);
    expect(rows[0]).toEqual({ n: 2_000, d: 2_000 });
  }, 90_000);
});

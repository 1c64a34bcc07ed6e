// The whole demo against a real worker: simulated districts, traffic, and the
// delivery worker in this process over a test database. Waits (bounded) for each
// behaviour to show in the ledger, then checks what the districts applied.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { startDemo, type Demo } from "../../demo/run";
import { runWorker } from "../../worker/main";
import { redriveDelivery } from "../../lib/redrive/redrive-batches";
import { SYSTEM } from "../../lib/auth/principal";
import { deliveryKey } from "../../lib/ledger/delivery-key";

let db: TestDb;
let demo: Demo;
let stopWorker: () => Promise<void>;

beforeAll(async () => {
  db = await createTestDatabase();
  demo = await startDemo({
    databaseUrl: db.url,
    dashboardUrl: "http://localhost:1",
    basePort: 0,
    stateDir: null,
    seedUser: false,
    waitForDashboard: false,
    log: () => {},
    eventsPerSecond: 8,
    missingTermIdRate: 0.4,
    // A quick ladder and short timeouts so every behaviour shows within seconds.
    retryPolicy: { ladderSeconds: [1, 1, 2, 3, 5], timeoutMs: 1500 },
    weights: { lincoln: 10, jefferson: 5, riverside: 25, maplegrove: 15, cedarfalls: 20, oakridge: 20, westfield: 5 },
    knobs: {
      riverside: { ratePerWindow: 2, windowSeconds: 4 },
      cedarfalls: { dropRate: 0.5 },
      oakridge: { failAfterCommitRate: 0.4 },
      jefferson: { latencyMs: [50, 200], hangMs: 3000 },
    },
  });
  const ac = new AbortController();
  const running = runWorker({ databaseUrl: db.url, signal: ac.signal, handleSignals: false, allowPrivateTargets: true, pollIntervalMs: 200 });
  stopWorker = async () => {
    ac.abort();
    await running;
  };
});

afterAll(async () => {
  await demo?.traffic.stop();
  await stopWorker?.();
  await demo?.stop();
  await db?.close();
});

/** Polls `probe` until it returns something truthy, for at most `ms`. */
async function eventually<T>(what: string, probe: () => Promise<T | null | undefined | false>, ms = 90_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > until) throw new Error(`Timed out after ${ms} ms waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

const district = (slug: string) => demo.districts.find((d) => d.info.slug === slug)!;

describe("the demo stack with a real worker", () => {
  it("honours the rate-limited district's Retry-After", async () => {
    const row = await eventually("a 429 with Retry-After followed by the next attempt", async () => {
      const { rows } = await db.pool.query<{ delivery_id: string; ra: number; started: Date; next_started: Date }>(`
        SELECT a.delivery_id, a.retry_after_seconds AS ra, a.started_at AS started, n.started_at AS next_started
        FROM attempts a
        JOIN attempts n ON n.delivery_id = a.delivery_id AND n.attempt_number = a.attempt_number + 1
        WHERE a.subscription_id = 'sub_demo_riverside' AND a.status_code = 429 AND a.retry_after_seconds IS NOT NULL
        LIMIT 20`);
      return rows.length >= 3 ? rows : null;
    });
    for (const r of row) {
      expect(r.ra).toBeGreaterThanOrEqual(1);
      // The next attempt did not start before the district said it could (the answer came after started_at).
      expect(r.next_started.getTime()).toBeGreaterThanOrEqual(r.started.getTime() + r.ra * 1000 - 50);
    }
  });

  it("dead-letters the strict importer's 422 at once, as permanent", async () => {
    const d = await eventually("a 422 dead letter", async () => {
      const { rows } = await db.pool.query(
        `SELECT id, attempt_count, dead_letter_reason, last_status_code FROM deliveries
         WHERE subscription_id = 'sub_demo_maplegrove' AND state = 'dead_letter' LIMIT 1`,
      );
      return rows[0];
    });
    expect(d).toMatchObject({ attempt_count: 1, dead_letter_reason: "permanent", last_status_code: 422 });
    const a = await db.prisma.attempt.findFirstOrThrow({ where: { deliveryId: d.id } });
    expect(a.responseExcerpt).toContain("missing field term_id");
  });

  it("disables the decommissioned district's subscription on 410 and holds its later deliveries", async () => {
    await eventually("the westfield subscription disabled", async () => {
      const s = await db.prisma.subscription.findUniqueOrThrow({ where: { id: "sub_demo_westfield" } });
      return s.state === "disabled";
    });
    const gone = await db.prisma.delivery.findFirstOrThrow({ where: { subscriptionId: "sub_demo_westfield", state: "dead_letter" } });
    expect(gone.deadLetterReason).toBe("gone");
    expect(gone.lastStatusCode).toBe(410);
    // The control page shows hookledger's side of it too.
    await eventually(
      "the control page showing the subscription disabled",
      async () => {
        const w = demo.state().districts.find((d) => d.slug === "westfield");
        return w?.subscription?.state === "disabled";
      },
      10_000,
    );
    const received = district("westfield").stats.received;
    await demo.traffic.publishOne("westfield");
    await demo.traffic.publishOne("westfield");
    await new Promise((r) => setTimeout(r, 2_000));
    expect(district("westfield").stats.received).toBe(received);
    expect(await db.prisma.delivery.count({ where: { subscriptionId: "sub_demo_westfield", state: "pending" } })).toBeGreaterThanOrEqual(2);
  });

  it("retries the commit-then-drop district with the same webhook-id, and it applies once", async () => {
    const row = await eventually("a dropped connection retried and then delivered", async () => {
      const { rows } = await db.pool.query<{ id: string; delivery_key: string }>(`
        SELECT d.id, d.delivery_key FROM deliveries d
        WHERE d.subscription_id = 'sub_demo_cedarfalls' AND d.state = 'delivered'
          AND EXISTS (SELECT 1 FROM attempts a WHERE a.delivery_id = d.id AND a.outcome = 'retry' AND a.error_class = 'reset')
        LIMIT 1`);
      return rows[0];
    });
    const attempts = await db.prisma.attempt.findMany({ where: { deliveryId: row.id }, orderBy: { attemptNumber: "asc" } });
    expect(attempts[0]).toMatchObject({ outcome: "retry", errorClass: "reset", ambiguous: true });
    expect(attempts.at(-1)!.outcome).toBe("delivered");
    const seen = district("cedarfalls").applied.get(row.delivery_key)!;
    expect(seen.seen).toBeGreaterThanOrEqual(2);
    expect(seen.n).toBe(1);
  });

  it("the de-duplicating district applied every delivery key once, every delivered one included", async () => {
    await eventually("oak ridge recognising a redelivery", async () => district("oakridge").stats.duplicatesIgnored > 0);
    const oak = district("oakridge");
    expect(oak.stats.signaturesVerified).toBe(oak.stats.received);
    expect(oak.stats.signatureFailures).toBe(0);
    for (const [, row] of oak.applied) expect(row.n).toBe(1);
    const delivered = await db.prisma.delivery.findMany({
      where: { subscriptionId: "sub_demo_oakridge", state: "delivered" },
      select: { deliveryKey: true, eventId: true },
    });
    expect(delivered.length).toBeGreaterThan(0);
    for (const d of delivered) {
      expect(d.deliveryKey).toBe(deliveryKey("sub_demo_oakridge", d.eventId));
      expect(oak.applied.get(d.deliveryKey)?.n).toBe(1);
    }
    for (const d of demo.districts.filter((x) => x.info.dedupe)) expect(d.status().maxAppliedPerKey).toBeLessThanOrEqual(1);
  });

  it("after the fix switch, a redriven 422 is delivered and the DLQ drains", async () => {
    await fetch(`${demo.controlUrl}/api/districts/maplegrove/fix`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"fixed":true}' });
    const dead = await db.prisma.delivery.findMany({ where: { subscriptionId: "sub_demo_maplegrove", state: "dead_letter" }, take: 5 });
    expect(dead.length).toBeGreaterThan(0);
    for (const d of dead) await redriveDelivery(db.prisma, { id: d.id, reason: "Maple Grove now defaults term_id", principal: SYSTEM });
    await eventually(
      "the redriven deliveries delivered",
      async () => {
        const n = await db.prisma.delivery.count({ where: { id: { in: dead.map((d) => d.id) }, state: "delivered" } });
        return n === dead.length;
      },
      30_000,
    );
    // Same identity on the redrive: the district saw the original webhook-id.
    for (const d of dead) expect(district("maplegrove").applied.get(d.deliveryKey)?.n).toBe(1);
  });
});

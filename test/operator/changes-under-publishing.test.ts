// An operator's change to a subscription does not wait for the producers publishing to it. A producer's transaction
// that has published an event holds KEY SHARE on each matched subscription's row until it commits (the enqueue takes
// it, so that an archive waits for it), and a steady producer always has one open. A lock that conflicts with KEY
// SHARE (FOR UPDATE) waits for the open ones, and PostgreSQL lets each new KEY SHARE in ahead of it, so under steady
// traffic a pause could wait past the statement timeout: the fault-injection run at full size hit exactly that (its
// pause ran into the timeout while 350 events a second were published). Pause, resume, a probe's resume, a secret's
// rotation and its early end lock the row as an UPDATE does (FOR NO KEY UPDATE), which KEY SHARE does not block; so
// does the claim of a due probe, whose SKIP LOCKED passed over such a row. Here one producer's transaction stays open
// across each change: the change must be answered meanwhile.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import * as subRoute from "../../app/api/v1/subscriptions/[id]/route";
import * as secretsRoute from "../../app/api/v1/subscriptions/[id]/secrets/route";
import * as secretRoute from "../../app/api/v1/subscriptions/[id]/secrets/[secretId]/route";
import * as archiveRoute from "../../app/api/v1/subscriptions/[id]/archive/route";
import { createSubscription } from "../../lib/subscriptions/manage-subscriptions";
import { publishEvent } from "../../lib/events/publish";
import { resumeAfterProbe } from "../../lib/ledger/sql/subscription-state";
import { claimDueProbes } from "../../lib/ledger/sql/probe";
import { SYSTEM } from "../../lib/auth/principal";

let db: TestDb;
let manager: string;
let admin: string;
let n = 0;

beforeAll(async () => {
  db = await createTestDatabase();
  manager = await tokenFor(db.prisma, "manager");
  admin = await tokenFor(db.prisma, "admin");
  await createSubscription(db.prisma, { id: "sub_busy", name: "Busy SIS", url: "https://busy.example.test/hooks", eventTypes: ["assignment.graded"] }, SYSTEM);
});
afterAll(async () => db?.close());

/** A producer's transaction with one event of `type` published, left open (with the KEY SHARE it holds), and the subscriptions it matched. */
async function openPublish(type = "assignment.graded"): Promise<{ client: pg.PoolClient; subscriptions: string[] }> {
  const client = await db.pool.connect();
  await client.query("BEGIN");
  const r = await publishEvent(client, { id: `evt_busy_${++n}`, type, data: { score: n } });
  return { client, subscriptions: r.deliveries.map((d) => d.subscriptionId) };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const within3s = <T>(p: Promise<T>) => Promise.race([p, sleep(3_000).then(() => "waited" as const)]);

/**
 * `change` run while a publish to the subscription is open: its answer, or "waited" when it had none within 3 s (it
 * was waiting for the producer). The producer commits afterwards either way, so a waiting change ends too.
 */
async function whilePublishing<T>(change: () => Promise<T>): Promise<T | "waited"> {
  const producer = await openPublish();
  expect(producer.subscriptions).toEqual(["sub_busy"]);
  const pending = change();
  try {
    return await within3s(pending);
  } finally {
    await producer.client.query("COMMIT");
    producer.client.release();
    await pending;
  }
}

const state = async () => (await db.pool.query("SELECT state, paused_reason FROM subscriptions WHERE id = 'sub_busy'")).rows[0];

describe("a subscription's changes while a producer publishes to it", () => {
  it("a pause and a resume are answered while a publish to the subscription is open", async () => {
    const paused = await whilePublishing(() => call(subRoute.PATCH, { token: manager, params: { id: "sub_busy" }, body: { state: "paused", reason: "incident" } }));
    expect(paused === "waited" ? paused : paused.status).toBe(200);
    expect(await state()).toEqual({ state: "paused", paused_reason: "manual" });
    const resumed = await whilePublishing(() => call(subRoute.PATCH, { token: manager, params: { id: "sub_busy" }, body: { state: "active" } }));
    expect(resumed === "waited" ? resumed : resumed.status).toBe(200);
    expect(await state()).toEqual({ state: "active", paused_reason: null });
    // The events published meanwhile got their deliveries: nothing was refused or lost to the change.
    expect((await db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE subscription_id = 'sub_busy'")).rows[0].n).toBe(n);
  });

  it("a probe's answer resumes a subscription paused for failing while a publish is open", async () => {
    await db.pool.query("UPDATE subscriptions SET state = 'paused', paused_reason = 'failing', paused_at = now(), failing_since = now() WHERE id = 'sub_busy'");
    const resumed = await whilePublishing(() => resumeAfterProbe(db.pool, { subscriptionId: "sub_busy", status: 204, latencyMs: 12, at: new Date() }));
    expect(resumed).toBe("resumed");
    expect(await state()).toEqual({ state: "active", paused_reason: null });
  });

  it("a probe that is due is claimed while a publish is open, so a failing endpoint under steady traffic is still probed", async () => {
    await db.pool.query(
      "UPDATE subscriptions SET state = 'paused', paused_reason = 'failing', paused_at = now(), failing_since = now(), next_probe_at = now() - interval '1 second' WHERE id = 'sub_busy'",
    );
    // SKIP LOCKED passes over a row whose lock conflicts: with FOR UPDATE, every row a producer held KEY SHARE on.
    const claimed = await whilePublishing(() => claimDueProbes(db.pool, { limit: 10, leaseSeconds: 30 }));
    expect(claimed === "waited" ? claimed : claimed.map((p) => p.id)).toEqual(["sub_busy"]);
    await db.pool.query(
      "UPDATE subscriptions SET state = 'active', paused_reason = NULL, paused_at = NULL, failing_since = NULL, next_probe_at = NULL WHERE id = 'sub_busy'",
    );
  });

  it("a secret's rotation and the early end of the old one are answered while a publish is open", async () => {
    const rotated = await whilePublishing(() => call(secretsRoute.POST, { token: manager, params: { id: "sub_busy" }, body: { reason: "leaked in a ticket" } }));
    expect(rotated === "waited" ? rotated : rotated.status).toBe(201);
    const old = (await db.pool.query("SELECT id FROM subscription_secrets WHERE subscription_id = 'sub_busy' ORDER BY created_at LIMIT 1")).rows[0].id;
    const ended = await whilePublishing(() => call(secretRoute.DELETE, { token: admin, params: { id: "sub_busy", secretId: old } }));
    expect(ended === "waited" ? ended : ended.status).toBe(200);
  });

  it("an archive is answered while producers keep publishing to it; what the ones before it wrote is superseded", async () => {
    await createSubscription(db.prisma, { id: "sub_moving", name: "Moving SIS", url: "https://moving.example.test/hooks", eventTypes: ["roster.updated"] }, SYSTEM);
    const before = await openPublish("roster.updated");
    expect(before.subscriptions).toEqual(["sub_moving"]);
    const archiving = call(archiveRoute.POST, { token: manager, params: { id: "sub_moving" }, body: { reason: "district moved to a new SIS" } });
    // The archive commits without waiting for `before`; a producer that publishes after that matches nothing to it.
    await expect
      .poll(async () => (await db.pool.query("SELECT archived_at IS NOT NULL AS done FROM subscriptions WHERE id = 'sub_moving'")).rows[0].done, { timeout: 3_000 })
      .toBe(true);
    const after = await openPublish("roster.updated");
    await before.client.query("COMMIT");
    before.client.release();
    const answer = await within3s(archiving);
    await after.client.query("COMMIT");
    after.client.release();
    const done = await archiving;
    expect(answer === "waited" ? answer : answer.status).toBe(200);
    expect(after.subscriptions).toEqual([]);
    // `before`'s delivery, invisible to the archive's own statement, was superseded once `before` committed.
    expect(done.json.superseded).toBe(1);
    const rows = (await db.pool.query("SELECT state, resolution FROM deliveries WHERE subscription_id = 'sub_moving'")).rows;
    expect(rows).toEqual([{ state: "resolved", resolution: "superseded" }]);
    const audit = (
      await db.pool.query(
        "SELECT action FROM audit_entries WHERE target_id IN ('sub_moving') OR (action = 'delivery.resolve' AND details->>'subscriptionId' = 'sub_moving') ORDER BY id",
      )
    ).rows;
    expect(audit.map((r) => r.action)).toEqual(["subscription.create", "subscription.archive", "delivery.resolve"]);
  });

  it("a tenant move of a subscription producers publish to is refused at once (409), not after waiting for them", async () => {
    await db.prisma.tenant.create({ data: { id: "lincoln", name: "Lincoln USD" } });
    const moved = await whilePublishing(() => call(subRoute.PATCH, { token: admin, params: { id: "sub_busy" }, body: { tenant: "lincoln" } }));
    expect(moved === "waited" ? moved : moved.status).toBe(409);
  });
});

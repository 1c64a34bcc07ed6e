// Operational events (migration 0006): a dead-letter, a disable, a recovery and
// a DLQ crossing its threshold each publish one hookledger.* event, in the
// same transaction, to exactly the subscriptions that asked for that type.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { publishEventStandalone } from "../../lib/events/publish";
import { OPS_EVENT_TYPES } from "../../lib/ops-events/types";
import { rotateSecret } from "../../lib/subscriptions/rotation";

let db: TestDb;
let n = 0;

async function sub(id: string, eventTypes: string[], tenant: string | null = null) {
  await db.pool.query("INSERT INTO subscriptions (id, name, tenant, url, event_types) VALUES ($1, $2, $3, 'https://x.example.test/h', $4)", [
    id,
    `${id} name`,
    tenant,
    eventTypes,
  ]);
}

/** Publishes one assignment.graded for lincoln and returns the delivery to sub_lincoln. */
async function graded(): Promise<string> {
  const r = await publishEventStandalone(db.prisma, {
    id: `evt_ops_${++n}`,
    type: "assignment.graded",
    data: { studentId: "stu_1", score: 90 },
    subject: { tenant: "lincoln" },
  });
  return r.deliveries.find((d) => d.subscriptionId === "sub_lincoln")!.id;
}

/** The dead-letter write the worker makes (one guarded statement). */
async function deadLetter(ids: string[], reason = "exhausted") {
  await db.pool.query(
    "UPDATE deliveries SET state = 'dead_letter', dead_letter_reason = $2, dead_lettered_at = now(), total_attempts = total_attempts + 1 WHERE id = ANY($1) AND state <> 'dead_letter'",
    [ids, reason],
  );
}
async function deliver(ids: string[]) {
  await db.pool.query("UPDATE deliveries SET state = 'delivered', delivered_at = now() WHERE id = ANY($1)", [ids]);
}

async function opsEvents(type: string) {
  const { rows } = await db.pool.query<{ id: string; payload: Buffer; tenant: string | null; subject_values: string[] }>(
    "SELECT id, payload, tenant, subject_values FROM events WHERE type = $1 ORDER BY id",
    [type],
  );
  const out = [];
  for (const r of rows) {
    const ds = await db.pool.query<{ subscription_id: string; state: string; delivery_key: string }>(
      "SELECT subscription_id, state, delivery_key FROM deliveries WHERE event_id = $1 ORDER BY subscription_id",
      [r.id],
    );
    out.push({ id: r.id, body: JSON.parse(r.payload.toString("utf8")), tenant: r.tenant, subjectValues: r.subject_values, deliveries: ds.rows });
  }
  return out;
}

beforeAll(async () => {
  db = await createTestDatabase();
  await sub("sub_lincoln", ["assignment.graded"], "lincoln");
  await sub("sub_catch_all", ["*"]);
  await sub("sub_ops_pager", [
    "hookledger.delivery.dead_lettered",
    "hookledger.subscription.disabled",
    "hookledger.subscription.recovered",
    "hookledger.dlq.threshold_exceeded",
  ]);
  await sub("sub_ops_lincoln_chat", ["hookledger.delivery.dead_lettered"], "lincoln");
  await sub("sub_ops_jefferson_chat", ["hookledger.delivery.dead_lettered"], "jefferson");
  await sub("sub_ops_disabled_only", ["hookledger.subscription.disabled"]);
});
afterAll(async () => db?.close());

describe("hookledger.delivery.dead_lettered", () => {
  it("one dead-letter → exactly one event, delivered to the subscriptions that asked for it and no others", async () => {
    const id = await graded();
    await deadLetter([id], "permanent");
    const evs = await opsEvents("hookledger.delivery.dead_lettered");
    expect(evs).toHaveLength(1);
    const [ev] = evs;
    expect(ev.body).toMatchObject({
      id: ev.id,
      type: "hookledger.delivery.dead_lettered",
      data: { deliveryId: id, subscriptionId: "sub_lincoln", eventId: `evt_ops_${n}`, eventType: "assignment.graded", reason: "permanent", attempts: 1 },
    });
    expect(new Date(ev.body.timestamp).toISOString()).toBe(ev.body.timestamp);
    expect(ev.tenant).toBe("lincoln");
    expect(ev.subjectValues).toContain(id);
    // The global pager and lincoln's chat; not jefferson's, not the catch-all, not the disabled-only one.
    expect(ev.deliveries.map((d) => d.subscription_id)).toEqual(["sub_ops_lincoln_chat", "sub_ops_pager"]);
    expect(ev.deliveries.every((d) => d.state === "pending")).toBe(true);
  });

  it("a dead-letter that rolls back leaves no event", async () => {
    const id = await graded();
    const client = await db.pool.connect();
    await client.query("BEGIN");
    await client.query("UPDATE deliveries SET state = 'dead_letter', dead_letter_reason = 'exhausted', dead_lettered_at = now() WHERE id = $1", [id]);
    await client.query("ROLLBACK");
    client.release();
    expect(await opsEvents("hookledger.delivery.dead_lettered")).toHaveLength(1);
  });

  it("a batch of dead-letters in one statement → one event each", async () => {
    const ids = [await graded(), await graded(), await graded()];
    await deadLetter(ids);
    const evs = await opsEvents("hookledger.delivery.dead_lettered");
    expect(evs).toHaveLength(4);
    expect(
      evs
        .slice(1)
        .map((e) => e.body.data.deliveryId)
        .sort(),
    ).toEqual([...ids].sort());
  });

  it("a dead-lettered operational delivery does not emit another operational event", async () => {
    const before = await db.pool.query("SELECT count(*)::int AS n FROM events WHERE type LIKE 'hookledger.%'");
    const ops = await db.pool.query<{ id: string }>("SELECT id FROM deliveries WHERE event_type LIKE 'hookledger.%' AND state = 'pending'");
    expect(ops.rows.length).toBeGreaterThan(0);
    await deadLetter(
      ops.rows.map((r) => r.id),
      "exhausted",
    );
    const after = await db.pool.query("SELECT count(*)::int AS n FROM events WHERE type LIKE 'hookledger.%'");
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });
});

describe("hookledger.subscription.recovered and .disabled", () => {
  it("the first delivery after a dead-letter publishes one recovered event; the next does not", async () => {
    const a = await graded();
    const b = await graded();
    await deliver([a]);
    const evs = await opsEvents("hookledger.subscription.recovered");
    expect(evs).toHaveLength(1);
    expect(evs[0].body.data).toMatchObject({ subscriptionId: "sub_lincoln", deliveryId: a });
    expect(evs[0].body.data.failingSince).toBeTruthy();
    expect(evs[0].deliveries.map((d) => d.subscription_id)).toEqual(["sub_ops_pager"]);
    await deliver([b]);
    expect(await opsEvents("hookledger.subscription.recovered")).toHaveLength(1);
  });

  it("disabling a subscription (the worker's 410 path) publishes disabled; its next delivery after re-enabling, recovered", async () => {
    await db.pool.query("UPDATE subscriptions SET state = 'disabled', state_reason = '410 Gone' WHERE id = 'sub_lincoln'");
    await db.pool.query("UPDATE subscriptions SET updated_at = now() WHERE id = 'sub_lincoln'"); // not a state change
    const dis = await opsEvents("hookledger.subscription.disabled");
    expect(dis).toHaveLength(1);
    expect(dis[0].body.data).toMatchObject({ subscriptionId: "sub_lincoln", reason: "410 Gone", previousState: "active" });
    expect(dis[0].deliveries.map((d) => d.subscription_id)).toEqual(["sub_ops_disabled_only", "sub_ops_pager"]);
    await db.pool.query("UPDATE subscriptions SET state = 'active', state_reason = NULL WHERE id = 'sub_lincoln'");
    await deliver([await graded()]);
    expect(await opsEvents("hookledger.subscription.recovered")).toHaveLength(2);
  });
});

describe("hookledger.subscription.paused", () => {
  it("a pause for failing publishes one paused event to the subscriptions that asked for it; a manual pause publishes nothing", async () => {
    await sub("sub_ops_paused_only", ["hookledger.subscription.paused"]);
    await sub("sub_flaky", ["assignment.graded"]);
    await db.pool.query("UPDATE subscriptions SET state = 'paused', paused_reason = 'manual', paused_at = now() WHERE id = 'sub_flaky'");
    await db.pool.query("UPDATE subscriptions SET state = 'active', paused_reason = NULL, paused_at = NULL WHERE id = 'sub_flaky'");
    expect(await opsEvents("hookledger.subscription.paused")).toHaveLength(0);
    // The result write's pause (lib/ledger/sql/subscription-state.ts), reduced to its row change.
    await db.pool.query(
      "UPDATE subscriptions SET state = 'paused', paused_reason = 'failing', paused_at = now(), failing_since = now() - interval '1 day', failing_attempts = 25, next_probe_at = now() + interval '15 minutes' WHERE id = 'sub_flaky'",
    );
    await db.pool.query("UPDATE subscriptions SET probe_count = 1 WHERE id = 'sub_flaky'"); // not a state change
    const ev = await opsEvents("hookledger.subscription.paused");
    expect(ev).toHaveLength(1);
    expect(ev[0].body.data).toMatchObject({ subscriptionId: "sub_flaky", subscriptionName: "sub_flaky name", reason: "failing", failedAttempts: 25 });
    expect(ev[0].deliveries.map((d) => d.subscription_id)).toEqual(["sub_ops_paused_only"]);
  });
});

describe("hookledger.dlq.threshold_exceeded", () => {
  it("publishes once when the DLQ crosses the threshold, re-arms when it falls below", async () => {
    await db.pool.query("UPDATE ops_settings SET dlq_threshold = 6");
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE subscription_id = 'sub_lincoln' AND state = 'dead_letter'");
    expect(rows[0].n).toBe(4);
    await deadLetter([await graded()]);
    expect(await opsEvents("hookledger.dlq.threshold_exceeded")).toHaveLength(0);
    await deadLetter([await graded()]); // 6
    let evs = await opsEvents("hookledger.dlq.threshold_exceeded");
    expect(evs).toHaveLength(1);
    expect(evs[0].body.data).toMatchObject({ subscriptionId: "sub_lincoln", depth: 6, threshold: 6 });
    await deadLetter([await graded()]); // 7: still over, no repeat
    expect(await opsEvents("hookledger.dlq.threshold_exceeded")).toHaveLength(1);
    // A redrive empties the DLQ (re-arms), then it fills again.
    await db.pool.query(
      "UPDATE deliveries SET state = 'pending', dead_letter_reason = NULL, dead_lettered_at = NULL WHERE subscription_id = 'sub_lincoln' AND state = 'dead_letter'",
    );
    const again = await db.pool.query<{ id: string }>("SELECT id FROM deliveries WHERE subscription_id = 'sub_lincoln' AND state = 'pending' ORDER BY id LIMIT 6");
    await deadLetter(again.rows.map((r) => r.id));
    evs = await opsEvents("hookledger.dlq.threshold_exceeded");
    expect(evs).toHaveLength(2);
    expect(evs[1].deliveries.map((d) => d.subscription_id)).toEqual(["sub_ops_pager"]);
  });

  it("a district's own threshold (its contacts) replaces the operator's for its subscriptions only", async () => {
    await db.pool.query("UPDATE ops_settings SET dlq_threshold = 4");
    await db.pool.query("INSERT INTO tenants (id, name) VALUES ('tinytown', 'Tinytown USD') ON CONFLICT DO NOTHING");
    await db.pool.query("INSERT INTO tenant_contacts (tenant, emails, dlq_threshold, updated_by) VALUES ('tinytown', '{}', 2, 'test')");
    await sub("sub_tiny", ["assignment.tiny"], "tinytown");
    await sub("sub_wide", ["assignment.tiny"]);
    const tiny: string[] = [];
    const wide: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await publishEventStandalone(db.prisma, { id: `evt_tiny_${i}`, type: "assignment.tiny", data: {}, subject: { tenant: "tinytown" } });
      tiny.push(r.deliveries.find((d) => d.subscriptionId === "sub_tiny")!.id);
      wide.push(r.deliveries.find((d) => d.subscriptionId === "sub_wide")!.id);
    }
    await deadLetter([...tiny, ...wide]);
    const evs = (await opsEvents("hookledger.dlq.threshold_exceeded")).filter((e) => ["sub_tiny", "sub_wide"].includes(e.body.data.subscriptionId));
    expect(evs.map((e) => e.body.data)).toEqual([expect.objectContaining({ subscriptionId: "sub_tiny", depth: 2, threshold: 2 })]);
    expect(evs[0].tenant).toBe("tinytown");
    // Without its own, the district is back at the operator's: sub_wide's two more make four, and it crosses there.
    const more: string[] = [];
    for (let i = 2; i < 4; i++) {
      const r = await publishEventStandalone(db.prisma, { id: `evt_tiny_${i}`, type: "assignment.tiny", data: {}, subject: { tenant: "tinytown" } });
      more.push(r.deliveries.find((d) => d.subscriptionId === "sub_wide")!.id);
    }
    await deadLetter(more);
    const wideEvs = (await opsEvents("hookledger.dlq.threshold_exceeded")).filter((e) => e.body.data.subscriptionId === "sub_wide");
    expect(wideEvs.map((e) => e.body.data)).toEqual([expect.objectContaining({ depth: 4, threshold: 4 })]);
  });

  it("concurrent dead-letters crossing the threshold publish exactly one event", async () => {
    await db.pool.query("UPDATE ops_settings SET dlq_threshold = 4");
    await sub("sub_race", ["assignment.race"]);
    await sub("sub_race_ops", ["hookledger.dlq.threshold_exceeded", "hookledger.delivery.dead_lettered"]);
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const r = await publishEventStandalone(db.prisma, { id: `evt_race_${i}`, type: "assignment.race", data: {} });
      ids.push(r.deliveries.find((d) => d.subscriptionId === "sub_race")!.id);
    }
    await Promise.all(ids.map((id) => deadLetter([id])));
    const evs = (await opsEvents("hookledger.dlq.threshold_exceeded")).filter((e) => e.body.data.subscriptionId === "sub_race");
    expect(evs).toHaveLength(1);
    const dl = (await opsEvents("hookledger.delivery.dead_lettered")).filter((e) => e.body.data.subscriptionId === "sub_race");
    expect(dl).toHaveLength(8);
  });
});

it("the exported type names are the ones published (by the triggers and by a secret rotation)", async () => {
  await sub("sub_rotating", ["assignment.rotated"]);
  await rotateSecret(db.prisma, "sub_rotating", {}, { kind: "system", id: "test", role: "admin", actor: "test" });
  const { rows } = await db.pool.query<{ type: string }>("SELECT DISTINCT type FROM events WHERE type LIKE 'hookledger.%' ORDER BY 1");
  expect(rows.map((r) => r.type)).toEqual([...OPS_EVENT_TYPES].sort());
});

it("the Prisma models read the observability tables", async () => {
  expect((await db.prisma.opsSettings.findFirstOrThrow()).dlqThreshold).toBe(4);
  const st = await db.prisma.subscriptionOpsState.findUniqueOrThrow({ where: { subscriptionId: "sub_lincoln" } });
  expect(st.dlqAlertedAt).toBeInstanceOf(Date);
  const counts = await db.prisma.deliveryStateCount.groupBy({ by: ["state"], where: { subscriptionId: "sub_race" }, _sum: { n: true } });
  expect(Number(counts.find((c) => c.state === "dead_letter")?._sum.n)).toBe(8);
});

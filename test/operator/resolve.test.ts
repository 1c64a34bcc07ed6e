// Resolve, single and bulk, through the real route handlers on a real
// Postgres: the decision is recorded on the row and in the delivery's audit
// rows (its timeline), the row leaves the DLQ depth, age and alert conditions
// everywhere they are read, and every refusal writes nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, tableCounts, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { seedDeadLetters, seedSubscription } from "../helpers/redrive-helpers";
import * as resolveOne from "../../app/api/v1/deliveries/[id]/resolve/route";
import * as resolveBulk from "../../app/api/v1/dlq/resolve/route";
import * as dlq from "../../app/api/v1/dlq/route";
import { readLedgerSnapshot } from "../../lib/metrics/ledger";
import { findStateCounts } from "../../lib/ledger/sql/counts";
import { findAlertConditions } from "../../lib/metrics/alerts";
import { sampleDlq } from "../../lib/rollups/sampler";
import { getDeliveryDetail } from "../../lib/dashboard/delivery";
import { databaseBefore } from "../helpers/migration-db";

let db: TestDb;
let engineer: string;
let support: string;
let manager: string;

beforeAll(async () => {
  db = await createTestDatabase();
  engineer = await tokenFor(db.prisma, "engineer");
  support = await tokenFor(db.prisma, "support");
  manager = await tokenFor(db.prisma, "manager");
  await seedSubscription(db, "sub_lincoln");
  await seedSubscription(db, "sub_westfield", undefined, "disabled");
});
afterAll(async () => db?.close());

const one = (id: string, body: unknown, token = engineer) => call(resolveOne.POST, { token, params: { id }, body });
const bulk = (body: unknown, token = engineer) => call(resolveBulk.POST, { token, body });
const depthOf = async (sub: string) => (await readLedgerSnapshot(db.pool)).dlq.find((d) => d.subscription === sub)?.depth ?? 0;

describe("POST /api/v1/deliveries/:id/resolve", () => {
  it("resolves a dead letter with the decision on the row and an audit row the timeline shows; the key is unchanged", async () => {
    const [id] = await seedDeadLetters(db, { subscriptionId: "sub_lincoln", n: 1, prefix: "evt_one_" });
    const key = (await db.pool.query("SELECT delivery_key FROM deliveries WHERE id = $1", [id])).rows[0].delivery_key;
    const r = await one(id, { resolution: "fixed_at_source", reason: "district re-imported by hand, INC-7" });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({
      id,
      state: "resolved",
      deliveryKey: key,
      resolution: { resolution: "fixed_at_source", by: "token:test-engineer", reason: "district re-imported by hand, INC-7" },
    });
    const row = (await db.pool.query("SELECT * FROM deliveries WHERE id = $1", [id])).rows[0];
    expect(row).toMatchObject({
      state: "resolved",
      resolution: "fixed_at_source",
      resolved_by: "token:test-engineer",
      delivery_key: key,
      dead_letter_reason: "permanent",
    });
    expect(row.resolved_at).toBeInstanceOf(Date);
    const audit = await db.prisma.auditEntry.findMany({ where: { targetId: id } });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ action: "delivery.resolve", targetType: "delivery", actor: "token:test-engineer", reason: "district re-imported by hand, INC-7" });
    expect(audit[0].details).toMatchObject({
      resolution: "fixed_at_source",
      subscriptionId: "sub_lincoln",
      deliveryKey: key,
      deadLetterReason: "permanent",
      bulkId: null,
    });
    const detail = await getDeliveryDetail({ id }, db.pool);
    expect(detail.history.map((h) => [h.action, h.actor, h.reason])).toEqual([["delivery.resolve", "token:test-engineer", "district re-imported by hand, INC-7"]]);
  });

  it("refuses bad input with a 4xx and writes nothing: unknown id 404, wrong state 409 naming the allowed state, empty or missing reason 400, unknown resolution 400, other roles 403", async () => {
    const [id] = await seedDeadLetters(db, { subscriptionId: "sub_lincoln", n: 1, prefix: "evt_bad_" });
    const [delivered] = await seedDeadLetters(db, { subscriptionId: "sub_lincoln", n: 1, prefix: "evt_bad_ok_" });
    await db.pool.query("UPDATE deliveries SET state = 'delivered', dead_letter_reason = NULL, dead_lettered_at = NULL, delivered_at = now() WHERE id = $1", [delivered]);
    const before = await tableCounts(db.pool);
    const rowBefore = (await db.pool.query("SELECT * FROM deliveries WHERE id = $1", [id])).rows[0];
    const cases: [Promise<{ status: number; json: any }>, number, RegExp?][] = [
      [one("dlv_doesnotexist", { resolution: "discarded", reason: "INC-1 gone" }), 404, /does not exist/],
      [one(delivered, { resolution: "discarded", reason: "INC-1 gone" }), 409, /delivered.*only when dead_letter/],
      [one(id, { resolution: "discarded", reason: "" }), 400],
      [one(id, { resolution: "discarded", reason: "   " }), 400],
      [one(id, { resolution: "discarded" }), 400],
      [one(id, { resolution: "forgotten", reason: "INC-1 gone" }), 400],
      [one(id, { reason: "INC-1 gone" }), 400],
      [one(id, { resolution: "discarded", reason: "INC-1 gone" }, support), 403],
      [one(id, { resolution: "discarded", reason: "INC-1 gone" }, manager), 403],
      [bulk({ filter: { subscriptionId: "sub_lincoln" }, resolution: "discarded" }), 400, /reason/],
      [bulk({ filter: { subscriptionId: "sub_lincoln" }, resolution: "nope", reason: "INC-1 gone" }), 400],
      [bulk({ filter: { subscriptionId: "sub_nobody" }, resolution: "discarded", reason: "INC-1 gone" }), 400, /does not exist/],
      [bulk({ filter: { subscriptionId: "sub_lincoln", statusCode: 599 }, resolution: "discarded", reason: "INC-1 gone" }), 409, /nothing to resolve/],
      [bulk({ filter: { subscriptionId: "sub_lincoln" }, resolution: "discarded", reason: "INC-1 gone" }, support), 403],
    ];
    for (const [p, status, msg] of cases) {
      const r = await p;
      expect(r.status, JSON.stringify(r.json)).toBe(status);
      if (msg) expect(r.json.error.message).toMatch(msg);
    }
    const wrong = await one(delivered, { resolution: "discarded", reason: "INC-1 gone" });
    expect(wrong.json.error.details).toMatchObject({ state: "delivered", allowedStates: ["dead_letter"] });
    expect(await tableCounts(db.pool)).toEqual(before);
    expect((await db.pool.query("SELECT * FROM deliveries WHERE id = $1", [id])).rows[0]).toEqual(rowBefore);
  });

  it("a resolved delivery cannot be resolved again (409: it says to redrive it to reopen it)", async () => {
    const [id] = await seedDeadLetters(db, { subscriptionId: "sub_lincoln", n: 1, prefix: "evt_twice_" });
    expect((await one(id, { resolution: "discarded", reason: "INC-2 first" })).status).toBe(200);
    const r = await one(id, { resolution: "superseded", reason: "INC-2 second" });
    expect(r.status).toBe(409);
    expect(r.json.error.message).toMatch(/already resolved; redrive it/);
    expect(await db.prisma.auditEntry.count({ where: { targetId: id } })).toBe(1);
  });
});

describe("POST /api/v1/dlq/resolve", () => {
  it("a dry run previews the exact count and writes nothing; the resolve honours the filter and moves the DLQ depth, age, /api/v1/dlq, the sampler and the alert conditions", async () => {
    const old = new Date(Date.now() - 3 * 3600_000);
    const gone = await seedDeadLetters(db, { subscriptionId: "sub_westfield", n: 40, prefix: "evt_wf_gone_", reason: "gone", statusCode: 410, at: old });
    const perm = await seedDeadLetters(db, { subscriptionId: "sub_westfield", n: 7, prefix: "evt_wf_perm_", reason: "permanent", statusCode: 422, at: old });
    expect(await depthOf("sub_westfield")).toBe(47);
    const alertBefore = (await findAlertConditions(db.pool)).conditions.find((c) => c.id === "dlq_oldest_age")!;
    expect(alertBefore.offenders.map((o) => o.subscriptionId)).toContain("sub_westfield");

    const before = await tableCounts(db.pool);
    const filter = { subscriptionId: "sub_westfield", deadLetterReason: "gone" };
    const dry = await bulk({ filter, resolution: "discarded", dryRun: true });
    expect(dry.status, dry.text).toBe(200);
    expect(dry.json).toMatchObject({ id: null, status: "preview", matched: 40 });
    expect(dry.json.sample).toHaveLength(10);
    expect(await tableCounts(db.pool)).toEqual(before);

    const r = await bulk({ filter, resolution: "discarded", reason: "Westfield decommissioned its SIS, INC-2240" });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ status: "resolved", resolved: 40, resolution: "discarded" });
    const states = await db.pool.query("SELECT state, count(*)::int AS n FROM deliveries WHERE id = ANY($1) GROUP BY 1", [[...gone, ...perm]]);
    expect(Object.fromEntries(states.rows.map((x) => [x.state, x.n]))).toEqual({ resolved: 40, dead_letter: 7 });
    // One audit row per resolved delivery (its timeline), one for the bulk action, nothing for the 7 it left.
    expect(await db.prisma.auditEntry.count({ where: { action: "delivery.resolve", targetId: { in: gone } } })).toBe(40);
    expect(await db.prisma.auditEntry.count({ where: { targetId: { in: perm } } })).toBe(0);
    const summary = await db.prisma.auditEntry.findFirstOrThrow({ where: { action: "dlq.resolve" } });
    expect(summary).toMatchObject({ targetType: "dlq", targetId: r.json.id, reason: "Westfield decommissioned its SIS, INC-2240" });
    expect(summary.details).toMatchObject({ count: 40, resolution: "discarded", filter });

    expect(await depthOf("sub_westfield")).toBe(7);
    const api = await call(dlq.GET, { token: support });
    expect(api.status, api.text).toBe(200);
    const wf = api.json.bySubscription.find((x: { subscriptionId: string }) => x.subscriptionId === "sub_westfield");
    expect(wf.depth).toBe(7);
    expect(api.json.groups.filter((g: { subscriptionId: string; reason: string }) => g.subscriptionId === "sub_westfield" && g.reason === "gone")).toEqual([]);
    const sample = await sampleDlq(db.pool, { minGapMs: 0 });
    expect(sample).toMatchObject({ sampled: true });
    const groups = await db.pool.query(
      "SELECT reason, depth FROM dlq_sample_groups WHERE subscription_id = 'sub_westfield' AND sampled_at = (SELECT max(sampled_at) FROM dlq_samples)",
    );
    expect(groups.rows.map((g) => [g.reason, Number(g.depth)])).toEqual([["permanent", 7]]);

    // The rest resolved too: the subscription leaves the DLQ-age alert.
    const r2 = await bulk({ filter: { subscriptionId: "sub_westfield" }, resolution: "superseded", reason: "replaced by the new endpoint, INC-2241" });
    expect(r2.json.resolved).toBe(7);
    expect(await depthOf("sub_westfield")).toBe(0);
    const alertAfter = (await findAlertConditions(db.pool)).conditions.find((c) => c.id === "dlq_oldest_age")!;
    expect(alertAfter.offenders.map((o) => o.subscriptionId)).not.toContain("sub_westfield");
    const resolved = await findStateCounts(db.pool, { subscriptionIds: ["sub_westfield"], states: ["resolved"] });
    expect(resolved.reduce((n, c) => n + c.n, 0)).toBe(47);
  });
});

describe("bulk resolve across chunks", () => {
  it("resolves 12,001 dead letters (three chunks of at most 5,000 ids) with one audit row each and leaves other subscriptions alone", async () => {
    await seedSubscription(db, "sub_big");
    await seedDeadLetters(db, { subscriptionId: "sub_big", n: 12_001, prefix: "evt_big_", reason: "gone", statusCode: 410 });
    const other = await seedDeadLetters(db, { subscriptionId: "sub_lincoln", n: 3, prefix: "evt_big_other_", reason: "gone", statusCode: 410 });
    const r = await bulk({ filter: { subscriptionId: "sub_big", deadLetterReason: "gone" }, resolution: "discarded", reason: "endpoint retired, INC-3000" });
    expect(r.status, r.text).toBe(200);
    expect(r.json.resolved).toBe(12_001);
    const { rows } = await db.pool.query("SELECT state, count(*)::int AS n FROM deliveries WHERE subscription_id = 'sub_big' GROUP BY 1");
    expect(rows).toEqual([{ state: "resolved", n: 12_001 }]);
    expect(await db.prisma.auditEntry.count({ where: { action: "delivery.resolve", details: { path: ["bulkId"], equals: r.json.id } } })).toBe(12_001);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE id = ANY($1) AND state = 'dead_letter'", [other])).rows[0].n).toBe(3);
  });
});

describe("migration 0013 on a database that already holds rows", () => {
  it("applies over existing deliveries and attempts, keeps them, and then accepts resolved rows and resend attempts", async () => {
    const mdb = await databaseBefore("0013");
    const c = mdb.client;
    try {
      await c.query(`INSERT INTO subscriptions (id, name, url, event_types) VALUES ('sub_m', 'm', 'https://m.example.test/h', '{assignment.graded}')`);
      await c.query(`INSERT INTO events (id, type, payload, occurred_at) SELECT 'evt_m' || i, 'assignment.graded', '\\x7b7d', now() FROM generate_series(1, 500) i`);
      await c.query(
        `INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, dead_letter_reason, dead_lettered_at)
         SELECT hl_delivery_key('sub_m', 'evt_m' || i), 'evt_m' || i, 'sub_m', 'assignment.graded',
                CASE WHEN i % 2 = 0 THEN 'dead_letter' ELSE 'delivered' END, CASE WHEN i % 2 = 0 THEN 'gone' END, CASE WHEN i % 2 = 0 THEN now() END
           FROM generate_series(1, 500) i`,
      );
      await c.query(
        `INSERT INTO attempts (delivery_id, subscription_id, attempt_number, trigger, started_at, outcome)
         SELECT id, subscription_id, 1, 'scheduled', now(), CASE WHEN state = 'delivered' THEN 'delivered' ELSE 'dead_letter' END FROM deliveries`,
      );
      expect(await mdb.applyRest()).toEqual(mdb.rest);
      const counts = await c.query("SELECT state, count(*)::int AS n FROM deliveries GROUP BY 1 ORDER BY 1");
      expect(counts.rows).toEqual([
        { state: "dead_letter", n: 250 },
        { state: "delivered", n: 250 },
      ]);
      expect((await c.query("SELECT count(*)::int AS n FROM attempts")).rows[0].n).toBe(500);
      await c.query(
        `UPDATE deliveries SET state = 'resolved', resolution = 'discarded', resolved_at = now(), resolved_by = 'user:a', resolution_reason = 'why' WHERE state = 'dead_letter'`,
      );
      await c.query(`UPDATE deliveries SET next_trigger = 'resend' WHERE state = 'delivered'`);
      await expect(c.query(`UPDATE deliveries SET state = 'resolved' WHERE state = 'delivered'`)).rejects.toThrow(/deliveries_resolution_check/);
      await expect(c.query(`UPDATE deliveries SET resolution = 'forgotten' WHERE state = 'resolved'`)).rejects.toThrow(/deliveries_resolution_check/);
    } finally {
      await mdb.close();
    }
  });
});

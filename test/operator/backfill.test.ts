// Backfill end to end with the real worker and a real node:http receiver: a
// subscription created today gets deliveries for the window's past events
// that match it (type, tenant) and have none for it, keyed as ingest keys
// them, sent paced, each once across a worker restart; a second backfill
// creates nothing. Also: refusals write nothing, and migration 0015 on a
// database that already holds redrive batches keeps them.
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, tableCounts, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { FAST, createSub, startReceiver, waitFor, type Receiver } from "../helpers/worker-helpers";
import { runWorker } from "../../worker/main";
import * as backfill from "../../app/api/v1/subscriptions/[id]/backfill/route";
import * as batch from "../../app/api/v1/redrives/[id]/route";
import { enqueueEvents, type EventRow } from "../../lib/ledger/sql/enqueue";
import { deliveryKey } from "../../lib/ledger/delivery-key";
import { databaseBefore } from "../helpers/migration-db";

let db: TestDb;
let engineer: string;
let support: string;
let receiver: Receiver;
let secret: string;

function startWorkerProcess() {
  const ac = new AbortController();
  const done = runWorker({ databaseUrl: db.url, ...FAST, signal: ac.signal });
  return { stop: async () => (ac.abort(), done) };
}

const progress = async (id: string) => (await call(batch.GET, { token: engineer, params: { id } })).json;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Events stored through the ledger's enqueue, delivered only to `subs` (none: stored with no delivery). */
async function publish(ids: string[], type: string, tenant: string | null, subs: string[]) {
  const rows: EventRow[] = ids.map((id) => ({
    id,
    type,
    payload: Buffer.from(JSON.stringify({ id, type, data: { tenant } })),
    occurredAt: new Date(),
    tenant,
    subject: "{}",
    subjectValues: [],
  }));
  await enqueueEvents(db.pool, rows, subs);
}
const range = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);

beforeAll(async () => {
  db = await createTestDatabase();
  engineer = await tokenFor(db.prisma, "engineer");
  support = await tokenFor(db.prisma, "support");
  receiver = await startReceiver();
  await createSub(db.pool, { id: "sub_old", url: receiver.url, maxConcurrency: 20 });
});
afterAll(async () => {
  await receiver?.close();
  await db?.close();
});

describe("backfill a new endpoint", () => {
  it("creates and sends, paced, one delivery per matching past event it has none for, keyed as ingest keys it, across a worker restart; a second backfill creates nothing", async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    await publish(range("evt_bf_", 40), "assignment.graded", "lincoln", ["sub_old"]); // match
    await publish(range("evt_west_", 5), "assignment.graded", "westfield", ["sub_old"]); // another tenant
    await publish(range("evt_roster_", 5), "roster.updated", "lincoln", []); // another type
    // The new district's subscription, created after those events.
    ({
      secrets: [secret],
    } = await createSub(db.pool, { id: "sub_new", url: receiver.url, maxConcurrency: 20 }));
    await db.pool.query("UPDATE subscriptions SET tenant = 'lincoln' WHERE id = 'sub_new'");
    await publish(["evt_bf_has_1", "evt_bf_has_2"], "assignment.graded", "lincoln", ["sub_new"]); // already delivered to it
    await publish(["evt_gone_1"], "assignment.graded", "lincoln", ["sub_old"]);
    await db.pool.query("UPDATE events SET tombstone = 'expunged', tombstoned_at = now() WHERE id = 'evt_gone_1'"); // its bytes are gone: never backfilled
    await sleep(50);
    const until = new Date().toISOString();
    await sleep(50);
    await publish(range("evt_late_", 4), "assignment.graded", "lincoln", []); // after the window

    const before = await tableCounts(db.pool);
    const dry = await call(backfill.POST, { token: engineer, params: { id: "sub_new" }, body: { since, until, reason: "ONBOARD-88", dryRun: true } });
    expect(dry.status, dry.text).toBe(200);
    expect(dry.json).toMatchObject({ id: null, status: "preview", kind: "backfill", matched: 40 });
    expect(await tableCounts(db.pool)).toEqual(before);

    let w = startWorkerProcess();
    const r = await call(backfill.POST, { token: engineer, params: { id: "sub_new" }, body: { since, until, reason: "ONBOARD-88", ratePerSecond: 10 } });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject({ kind: "backfill", status: "running", matched: 40, redriven: 0 });
    // Paced: nothing created at once.
    expect(
      (
        await db.pool.query(
          "SELECT count(*)::int AS n FROM deliveries WHERE subscription_id = 'sub_new' AND event_id LIKE 'evt_bf_%' AND event_id NOT LIKE 'evt_bf_has_%'",
        )
      ).rows[0].n,
    ).toBe(0);
    // Stop the worker once the pacer has moved some (a fixed sleep raced a slow worker start on a loaded machine). At
    // 10/s the 40 take 4 s, time enough for the stop to land mid-batch on a loaded machine (at 30/s, 1.3 s was not).
    await waitFor(async () => ((await progress(r.json.id)).redriven > 0 ? true : null), 30_000, "the pacer to move the first rows");
    await w.stop(); // SIGTERM mid-batch
    const mid = await progress(r.json.id);
    expect(mid.status).toBe("running");
    expect(mid.redriven).toBeGreaterThan(0);
    expect(mid.redriven).toBeLessThan(40);
    w = startWorkerProcess();
    try {
      const p = await waitFor(
        async () => {
          const x = await progress(r.json.id);
          return x.status === "done" && x.deliveredSince === 40 ? x : null;
        },
        30_000,
        "the backfill to finish and deliver",
      );
      expect(p).toMatchObject({ kind: "backfill", matched: 40, redriven: 40, skipped: 0, failedAgain: 0, inProgress: 0 });
    } finally {
      await w.stop();
    }

    const { rows } = await db.pool.query("SELECT event_id, delivery_key, state FROM deliveries WHERE subscription_id = 'sub_new' ORDER BY event_id");
    // The 40 created, the 2 it had; nothing for the other tenant, the other type, an expunged event or after the window.
    expect(rows.map((d) => d.event_id).sort()).toEqual([...range("evt_bf_", 40), "evt_bf_has_1", "evt_bf_has_2"].sort());
    for (const d of rows.filter((x) => !x.event_id.startsWith("evt_bf_has_"))) {
      expect(d.delivery_key).toBe(deliveryKey("sub_new", d.event_id)); // the key ingest derives
      expect(d.state).toBe("delivered");
      expect(receiver.count(d.delivery_key), d.event_id).toBe(1);
    }
    const one = receiver.received.find((x) => x.id === deliveryKey("sub_new", "evt_bf_7"))!;
    expect(JSON.parse(one.body.toString())).toMatchObject({ id: "evt_bf_7" }); // the stored bytes
    expect(() =>
      new Webhook(secret).verify(one.body, {
        "webhook-id": String(one.headers["webhook-id"]),
        "webhook-timestamp": String(one.headers["webhook-timestamp"]),
        "webhook-signature": String(one.headers["webhook-signature"]),
      }),
    ).not.toThrow();

    // Twice: nothing left to create. The preview says 0, the backfill is a 409, nothing is written.
    const again = await tableCounts(db.pool);
    const dry2 = await call(backfill.POST, { token: engineer, params: { id: "sub_new" }, body: { since, until, dryRun: true } });
    expect(dry2.json.matched).toBe(0);
    const second = await call(backfill.POST, { token: engineer, params: { id: "sub_new" }, body: { since, until, reason: "ONBOARD-88 again" } });
    expect(second.status, second.text).toBe(409);
    expect(second.json.error.message).toMatch(/nothing to backfill/);
    expect(await tableCounts(db.pool)).toEqual(again);

    const audit = await db.pool.query("SELECT action, actor, reason, details FROM audit_entries WHERE target_type = 'redrive_batch'");
    expect(audit.rows).toEqual([
      {
        action: "backfill.create",
        actor: "token:test-engineer",
        reason: "ONBOARD-88",
        details: { subscriptionId: "sub_new", since, until, count: 40, ratePerSecond: 10 },
      },
    ]);
  });

  it("two backfills of one window at once create each delivery once (the second skips what the first created)", async () => {
    await createSub(db.pool, { id: "sub_twice", url: receiver.url, maxConcurrency: 20 });
    const since = new Date(Date.now() - 60_000).toISOString();
    const a = await call(backfill.POST, { token: engineer, params: { id: "sub_twice" }, body: { since, reason: "ONBOARD-89", ratePerSecond: 5000 } });
    const b = await call(backfill.POST, { token: engineer, params: { id: "sub_twice" }, body: { since, reason: "ONBOARD-89 again", ratePerSecond: 5000 } });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.json.matched).toBe(a.json.matched);
    const w = startWorkerProcess();
    try {
      await waitFor(async () => (await progress(a.json.id)).status === "done" && (await progress(b.json.id)).status === "done", 20_000, "both batches");
    } finally {
      await w.stop();
    }
    const pa = await progress(a.json.id);
    const pb = await progress(b.json.id);
    expect(pa.redriven + pb.redriven).toBe(a.json.matched);
    expect(pa.skippedByOutcome.skipped_exists ?? 0).toBe(pb.redriven);
    expect(pb.skippedByOutcome.skipped_exists ?? 0).toBe(pa.redriven);
    const { rows } = await db.pool.query("SELECT count(*)::int AS n, count(DISTINCT event_id)::int AS e FROM deliveries WHERE subscription_id = 'sub_twice'");
    expect(rows[0]).toEqual({ n: a.json.matched, e: a.json.matched });
  });

  it("refuses with a 4xx and writes nothing", async () => {
    await createSub(db.pool, { id: "sub_bf_disabled", url: receiver.url, state: "disabled" });
    const ok = { since: new Date(Date.now() - 3_600_000).toISOString(), reason: "ONBOARD-90" };
    const before = await tableCounts(db.pool);
    const cases: [string, string | null, Record<string, unknown>, number][] = [
      ["sub_nope", engineer, ok, 404],
      ["sub_new", engineer, { ...ok, since: new Date(Date.now() + 60_000).toISOString() }, 400],
      ["sub_new", engineer, { ...ok, since: new Date(Date.now() - 500 * 86_400_000).toISOString() }, 400],
      ["sub_new", engineer, { ...ok, until: new Date(Date.now() - 7_200_000).toISOString() }, 400],
      ["sub_new", engineer, { since: ok.since }, 400],
      ["sub_new", engineer, { ...ok, reason: "" }, 400],
      ["sub_new", engineer, { ...ok, ratePerSecond: 10_000 }, 400],
      ["sub_new", engineer, { ...ok, states: ["delivered"] }, 400], // a recover's field
      ["sub_bf_disabled", engineer, ok, 409],
      ["sub_new", support, ok, 403],
    ];
    for (const [id, token, body, status] of cases) {
      const r = await call(backfill.POST, { token: token!, params: { id }, body });
      expect(r.status, `${id} ${JSON.stringify(body)}: ${r.text}`).toBe(status);
    }
    expect(await tableCounts(db.pool)).toEqual(before);
  });
});

describe("migration 0015 on a database that already holds redrive batches", () => {
  it("keeps every batch (kind redrive) and item, and the enqueue matches as before", async () => {
    const mdb = await databaseBefore("0015");
    const pool = mdb.client;
    try {
      await pool.query(
        "INSERT INTO subscriptions (id, name, tenant, url, event_types) VALUES ('sub_a', 'A', 'lincoln', 'https://a.example.test/h', '{assignment.graded}')",
      );
      await pool.query(
        `SELECT * FROM hl_enqueue_events(ARRAY['evt_1'], ARRAY['assignment.graded'], ARRAY[convert_to('{}', 'UTF8')], ARRAY[now()], ARRAY['lincoln'],
                                         ARRAY['{}'::jsonb], '{}'::text[], ARRAY[1], ARRAY[0])`,
      );
      await pool.query("UPDATE deliveries SET state = 'dead_letter', dead_letter_reason = 'permanent', dead_lettered_at = now()");
      await pool.query(
        "INSERT INTO redrive_batches (id, reason, actor, rate_per_second, matched, status) VALUES ('rdb_old', 'INC-1', 'user:a@example.test', 10, 1, 'done')",
      );
      await pool.query("INSERT INTO redrive_batch_items (batch_id, seq, delivery_id, outcome) SELECT 'rdb_old', 1, id, 'redriven' FROM deliveries");

      const applied = await mdb.applyRest();
      expect(applied).toContain("0015_recover_backfill");
      const b = await pool.query("SELECT id, kind, status, matched FROM redrive_batches");
      expect(b.rows).toEqual([{ id: "rdb_old", kind: "redrive", status: "done", matched: 1 }]);
      const i = await pool.query("SELECT seq, delivery_id IS NOT NULL AS has_delivery, event_id, outcome FROM redrive_batch_items");
      expect(i.rows).toEqual([{ seq: 1, has_delivery: true, event_id: null, outcome: "redriven" }]);
      // The enqueue, now through hl_subscription_matches: same tenant and type match, others do not.
      const out = await pool.query(
        `SELECT event_id, subscription_id FROM hl_enqueue_events(ARRAY['evt_2', 'evt_3', 'evt_4'], ARRAY['assignment.graded', 'assignment.graded', 'roster.updated'],
           ARRAY[convert_to('{}', 'UTF8'), convert_to('{}', 'UTF8'), convert_to('{}', 'UTF8')], ARRAY[now(), now(), now()], ARRAY['lincoln', 'westfield', 'lincoln'],
           ARRAY['{}'::jsonb, '{}'::jsonb, '{}'::jsonb], '{}'::text[], ARRAY[1, 1, 1], ARRAY[0, 0, 0]) ORDER BY event_id`,
      );
      expect(out.rows).toEqual([
        { event_id: "evt_2", subscription_id: "sub_a" },
        { event_id: "evt_3", subscription_id: null },
        { event_id: "evt_4", subscription_id: null },
      ]);
      // A batch item names a delivery or an event.
      await expect(pool.query("INSERT INTO redrive_batch_items (batch_id, seq) VALUES ('rdb_old', 2)")).rejects.toThrow(/redrive_batch_items_target_check/);
      await expect(pool.query("UPDATE redrive_batches SET kind = 'other'")).rejects.toThrow(/redrive_batches_kind_check/);
    } finally {
      await mdb.close();
    }
  });
});

// Bulk redrive on a real Postgres: preview, the persisted batch, the pacer's
// rate, cancellation, restarts, several pacers, and the safety skips.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, tableCounts, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { seedDeadLetters, seedSubscription } from "../helpers/redrive-helpers";
import * as redrives from "../../app/api/v1/redrives/route";
import * as redriveOne from "../../app/api/v1/redrives/[id]/route";
import * as cancel from "../../app/api/v1/redrives/[id]/cancel/route";
import { startRedrivePacer, type RedrivePacer } from "../../worker/redrive-pacer";
import { findNextBatchItems } from "../../lib/ledger/sql/redrive";

let db: TestDb;
let engineer: string;
let support: string;

beforeAll(async () => {
  db = await createTestDatabase();
  engineer = await tokenFor(db.prisma, "engineer");
  support = await tokenFor(db.prisma, "support");
  for (const id of ["sub_big", "sub_cancel", "sub_restart", "sub_two", "sub_safety", "sub_filters"]) await seedSubscription(db, id);
  await seedSubscription(db, "sub_paused", undefined, "paused");
});
afterAll(async () => db?.close());

const create = (body: unknown, token = engineer) => call(redrives.POST, { token, body });
const progress = async (id: string) => (await call(redriveOne.GET, { token: support, params: { id } })).json;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(pred: () => Promise<boolean>, timeoutMs = 30_000) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await pred()) return;
    await sleep(50);
  }
  throw new Error("timed out");
}

describe("preview (dryRun)", () => {
  beforeAll(async () => {
    const old = new Date(Date.now() - 3 * 3600_000);
    await seedDeadLetters(db, { subscriptionId: "sub_filters", n: 7, prefix: "evt_f422_", statusCode: 422, errorClass: "http_4xx", reason: "permanent", at: old });
    await seedDeadLetters(db, { subscriptionId: "sub_filters", n: 5, prefix: "evt_f500_", statusCode: 503, errorClass: "http_5xx", reason: "exhausted" });
    await seedDeadLetters(db, { subscriptionId: "sub_paused", n: 4, prefix: "evt_fp_", statusCode: 503, errorClass: "http_5xx", reason: "exhausted" });
  });

  it("gives the exact count and a sample, oldest first, and writes nothing", async () => {
    const before = await tableCounts(db.pool);
    const r = await create({ dryRun: true, filter: { subscriptionId: "sub_filters", deadLetterReason: "permanent" } });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ id: null, status: "preview", matched: 7, held: [] });
    expect(r.json.sample).toHaveLength(7);
    expect(r.json.sample[0]).toMatchObject({ subscriptionId: "sub_filters", lastStatusCode: 422, deadLetterReason: "permanent" });
    expect(await tableCounts(db.pool)).toEqual(before);
  });

  it("filters by error class, status code and dead-letter window", async () => {
    const m = async (filter: object) => (await create({ dryRun: true, filter: { subscriptionId: "sub_filters", ...filter } })).json.matched;
    expect(await m({ errorClass: "http_5xx" })).toBe(5);
    expect(await m({ statusCode: 422 })).toBe(7);
    expect(await m({ statusCode: 404 })).toBe(0);
    expect(await m({ deadLetteredFrom: new Date(Date.now() - 3600_000).toISOString() })).toBe(5);
    expect(await m({ deadLetteredTo: new Date(Date.now() - 3600_000).toISOString() })).toBe(7);
  });

  it("without a subscription filter, paused subscriptions are held back and named", async () => {
    const r = await create({ dryRun: true, filter: { errorClass: "http_5xx" } });
    expect(r.json.matched).toBe(5);
    expect(r.json.held).toEqual([
      expect.objectContaining({ subscriptionId: "sub_paused", state: "paused", count: 4, message: expect.stringMatching(/Resume it first/) }),
    ]);
  });

  it("aimed at a paused subscription: 409 saying to resume it first; an unknown one: 400", async () => {
    const r = await create({ dryRun: true, filter: { subscriptionId: "sub_paused" } });
    expect(r.status).toBe(409);
    expect(r.json.error.message).toMatch(/paused.*Resume it first/);
    const before = await tableCounts(db.pool);
    const c = await create({ reason: "INC-7", filter: { subscriptionId: "sub_paused" } });
    expect(c.status).toBe(409);
    expect(await tableCounts(db.pool)).toEqual(before);
    expect((await create({ dryRun: true, filter: { subscriptionId: "sub_nope" } })).status).toBe(400);
  });

  it("refuses bad input with 400 naming the field, and support with 403; nothing written", async () => {
    const before = await tableCounts(db.pool);
    for (const [body, field] of [
      [{ filter: { subscriptionId: "sub_filters" } }, "reason"],
      [{ reason: "x", filter: {} }, "reason"],
      [{ reason: "INC-1", ratePerSecond: 0 }, "ratePerSecond"],
      [{ reason: "INC-1", filter: { statusCode: "422" } }, "statusCode"],
      [{ reason: "INC-1", filter: { deadLetteredFrom: "yesterday" } }, "deadLetteredFrom"],
      [{ reason: "INC-1", filter: { bogus: 1 } }, "filter"],
      // A misspelt reason or class is no filter that matches nothing: it is refused.
      [{ reason: "INC-1", filter: { deadLetterReason: "exhaustd" } }, "deadLetterReason"],
      [{ reason: "INC-1", dryRun: true, filter: { errorClass: "http4xx" } }, "errorClass"],
    ] as const) {
      const r = await create(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.error.message).toContain(field);
    }
    expect((await create({ reason: "INC-1", filter: { subscriptionId: "sub_filters" } }, support)).status).toBe(403);
    expect(await tableCounts(db.pool)).toEqual(before);
    expect(await db.prisma.redriveBatch.count()).toBe(0);
  });

  it("a failed mutation leaves no batch and no audit row", async () => {
    await db.pool.query(`CREATE FUNCTION refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit store down'; END $$`);
    await db.pool.query(`CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_entries FOR EACH ROW EXECUTE FUNCTION refuse_audit()`);
    try {
      const r = await create({ reason: "INC-5", filter: { subscriptionId: "sub_filters" } });
      expect(r.status).toBe(500);
    } finally {
      await db.pool.query("DROP TRIGGER refuse_audit ON audit_entries; DROP FUNCTION refuse_audit()");
    }
    expect(await db.prisma.redriveBatch.count()).toBe(0);
    expect(Number((await db.pool.query("SELECT count(*) FROM redrive_batch_items")).rows[0].count)).toBe(0);
    expect(Number((await db.pool.query("SELECT count(*) FROM deliveries WHERE subscription_id = 'sub_filters' AND state = 'dead_letter'")).rows[0].count)).toBe(12);
    expect(await db.prisma.auditEntry.count({ where: { action: { startsWith: "redrive." } } })).toBe(0);
  });
});

describe("a paced batch", () => {
  let pacer: RedrivePacer | undefined;
  afterAll(async () => pacer?.stop());

  it("5,000 at 1,000/s takes at least 5 s, never runs ahead of its rate, and redrives each once", async () => {
    await seedDeadLetters(db, { subscriptionId: "sub_big", n: 5000, prefix: "evt_big_" });
    const t0 = Date.now();
    const r = await create({ reason: "INC-4242 Lincoln importer fixed", ratePerSecond: 1000, filter: { subscriptionId: "sub_big" } });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject({ matched: 5000, status: "running", redriven: 0 });
    const id = r.json.id;
    pacer = startRedrivePacer({ databaseUrl: db.url, intervalMs: 100 });
    const samples: { t: number; redriven: number }[] = [];
    await until(async () => {
      const p = await progress(id);
      samples.push({ t: (Date.now() - t0) / 1000, redriven: p.redriven });
      return p.status === "done";
    });
    const elapsed = (Date.now() - t0) / 1000;
    await pacer.stop();
    pacer = undefined;
    expect(elapsed).toBeGreaterThanOrEqual(5);
    expect(elapsed).toBeLessThan(9);
    // Never ahead of rate × elapsed (plus one tick of slack).
    for (const s of samples) expect(s.redriven).toBeLessThanOrEqual(1000 * s.t + 100);
    const p = await progress(id);
    expect(p).toMatchObject({ matched: 5000, redriven: 5000, skipped: 0, remaining: 0, status: "done", inProgress: 5000 });
    const { rows } = await db.pool.query(
      "SELECT state, next_trigger, next_actor, attempt_count, count(*)::int AS n FROM deliveries WHERE subscription_id = 'sub_big' GROUP BY 1, 2, 3, 4",
    );
    expect(rows).toEqual([{ state: "pending", next_trigger: "redrive", next_actor: "token:test-engineer", attempt_count: 0, n: 5000 }]);
    const audit = await db.prisma.auditEntry.findFirstOrThrow({ where: { targetId: id } });
    expect(audit).toMatchObject({ action: "redrive.create", reason: "INC-4242 Lincoln importer fixed", actor: "token:test-engineer" });
    expect(audit.details).toMatchObject({ count: 5000, ratePerSecond: 1000, filter: { subscriptionId: "sub_big" } });
    console.log(`5,000 at 1,000/s: done in ${elapsed.toFixed(2)} s`);
  });

  it("cancellation stops it part-way; what was not reached stays dead-lettered; audited", async () => {
    await seedDeadLetters(db, { subscriptionId: "sub_cancel", n: 5000, prefix: "evt_cancel_" });
    const r = await create({ reason: "INC-77", ratePerSecond: 1000, filter: { subscriptionId: "sub_cancel" } });
    const id = r.json.id;
    pacer = startRedrivePacer({ databaseUrl: db.url, intervalMs: 100 });
    await sleep(2000);
    const c = await call(cancel.POST, { token: engineer, params: { id }, body: { reason: "district asked us to stop" } });
    expect(c.status, c.text).toBe(200);
    expect(c.json.status).toBe("cancelled");
    const atCancel = await progress(id);
    await sleep(600);
    const later = await progress(id);
    await pacer.stop();
    pacer = undefined;
    expect(later.redriven).toBe(atCancel.redriven);
    expect(later.redriven).toBeGreaterThan(1000);
    expect(later.redriven).toBeLessThan(4000);
    expect(later).toMatchObject({ status: "cancelled", cancelledBy: "token:test-engineer", remaining: 5000 - later.redriven });
    const { rows } = await db.pool.query("SELECT state, count(*)::int AS n FROM deliveries WHERE subscription_id = 'sub_cancel' GROUP BY 1 ORDER BY 1");
    expect(rows).toEqual([
      { state: "dead_letter", n: 5000 - later.redriven },
      { state: "pending", n: later.redriven },
    ]);
    const audit = await db.prisma.auditEntry.findFirstOrThrow({ where: { targetId: id, action: "redrive.cancel" } });
    expect(audit.reason).toBe("district asked us to stop");
    const again = await call(cancel.POST, { token: engineer, params: { id } });
    expect(again.status).toBe(409);
    expect((await call(cancel.POST, { token: support, params: { id } })).status).toBe(403);
  });

  it("after a pacer restart mid-batch the batch completes, each delivery once", async () => {
    await seedDeadLetters(db, { subscriptionId: "sub_restart", n: 1500, prefix: "evt_restart_" });
    const r = await create({ reason: "INC-88", ratePerSecond: 500, filter: { subscriptionId: "sub_restart" } });
    const id = r.json.id;
    pacer = startRedrivePacer({ databaseUrl: db.url, intervalMs: 100 });
    await sleep(1200);
    await pacer.stop(); // the worker is stopped mid-batch
    const mid = await progress(id);
    expect(mid.status).toBe("running");
    expect(mid.redriven).toBeGreaterThan(0);
    expect(mid.redriven).toBeLessThan(1500);
    await sleep(1500);
    expect((await progress(id)).redriven).toBe(mid.redriven); // nothing moves without a pacer
    const t1 = Date.now();
    pacer = startRedrivePacer({ databaseUrl: db.url, intervalMs: 100 }); // a new worker process
    await until(async () => (await progress(id)).status === "done");
    const resumed = (Date.now() - t1) / 1000;
    await pacer.stop();
    pacer = undefined;
    // The pause does not bank budget: the rest still goes at ~500/s, after a burst of at most 1 s.
    expect(resumed).toBeGreaterThanOrEqual((1500 - mid.redriven) / 500 - 1.2);
    expect(await progress(id)).toMatchObject({ redriven: 1500, skipped: 0, remaining: 0 });
    expect(Number((await db.pool.query("SELECT count(*) FROM redrive_batch_items WHERE batch_id = $1 AND outcome = 'redriven'", [id])).rows[0].count)).toBe(1500);
  });

  it("two pacers (two worker processes) share one batch without doubling its rate", async () => {
    await seedDeadLetters(db, { subscriptionId: "sub_two", n: 1000, prefix: "evt_two_" });
    const t0 = Date.now();
    const r = await create({ reason: "INC-99", ratePerSecond: 500, filter: { subscriptionId: "sub_two" } });
    const a = startRedrivePacer({ databaseUrl: db.url, intervalMs: 50 });
    const b = startRedrivePacer({ databaseUrl: db.url, intervalMs: 50 });
    try {
      await until(async () => (await progress(r.json.id)).status === "done");
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
    expect((Date.now() - t0) / 1000).toBeGreaterThanOrEqual(2);
    expect(await progress(r.json.id)).toMatchObject({ redriven: 1000, skipped: 0 });
  });
});

describe("safety", () => {
  it("skips what was delivered meanwhile, what a paused subscription holds, and (latest state wins) superseded events", async () => {
    // 6 dead letters for stu_0..stu_5; a newer event for stu_0 and stu_1 was delivered.
    const ids = await seedDeadLetters(db, { subscriptionId: "sub_safety", n: 6, prefix: "evt_safe_", at: new Date(Date.now() - 7200_000) });
    await seedDeadLetters(db, { subscriptionId: "sub_safety", n: 2, prefix: "evt_safe_newer_" });
    await db.pool.query(
      "UPDATE events SET occurred_at = now() WHERE id LIKE 'evt_safe_newer_%'; UPDATE deliveries SET state = 'delivered', delivered_at = now(), dead_letter_reason = NULL, dead_lettered_at = NULL WHERE event_id LIKE 'evt_safe_newer_%'",
    );
    const preview = await create({ dryRun: true, latestStateWins: true, filter: { subscriptionId: "sub_safety" } });
    expect(preview.json).toMatchObject({ matched: 6, superseded: 2 });
    const r = await create({ reason: "INC-5 safety", ratePerSecond: 100, latestStateWins: true, filter: { subscriptionId: "sub_safety" } });
    expect(r.json.matched).toBe(6);
    // After the batch is planned: one is delivered by a late success.
    await db.pool.query("UPDATE deliveries SET state = 'delivered', delivered_at = now() WHERE id = $1", [ids[2]]);
    const pacer = startRedrivePacer({ databaseUrl: db.url, intervalMs: 50 });
    try {
      await until(async () => (await progress(r.json.id)).status === "done");
    } finally {
      await pacer.stop();
    }
    const p = await progress(r.json.id);
    expect(p).toMatchObject({ matched: 6, redriven: 3, skipped: 3, skippedBy: { notDeadLettered: 1, superseded: 2, subscriptionInactive: 0 } });
    const states = (await db.pool.query("SELECT id, state FROM deliveries WHERE id = ANY($1) ORDER BY id", [ids])).rows;
    expect(states.filter((s) => s.state === "pending")).toHaveLength(3);
    expect(states.find((s) => s.id === ids[2]).state).toBe("delivered");
  });

  it("a subscription paused after the batch was planned holds its deliveries (skipped, still dead-lettered)", async () => {
    await seedSubscription(db, "sub_later_paused");
    await seedDeadLetters(db, { subscriptionId: "sub_later_paused", n: 3, prefix: "evt_lp_" });
    const r = await create({ reason: "INC-6", filter: { subscriptionId: "sub_later_paused" } });
    await db.pool.query("UPDATE subscriptions SET state = 'paused' WHERE id = 'sub_later_paused'");
    const pacer = startRedrivePacer({ databaseUrl: db.url, intervalMs: 50 });
    try {
      await until(async () => (await progress(r.json.id)).status === "done");
    } finally {
      await pacer.stop();
    }
    expect(await progress(r.json.id)).toMatchObject({ redriven: 0, skipped: 3, skippedBy: { subscriptionInactive: 3 } });
    expect(Number((await db.pool.query("SELECT count(*) FROM deliveries WHERE subscription_id = 'sub_later_paused' AND state = 'dead_letter'")).rows[0].count)).toBe(3);
  });

  it("an empty match is refused (409), with nothing written", async () => {
    const before = await tableCounts(db.pool);
    const r = await create({ reason: "INC-0", filter: { subscriptionId: "sub_filters", statusCode: 418 } });
    expect(r.status).toBe(409);
    expect(r.json.error.message).toMatch(/nothing to redrive/);
    expect(await tableCounts(db.pool)).toEqual(before);
  });

  it("lists batches, newest first", async () => {
    const r = await call(redrives.GET, { token: support, path: "/api/v1/redrives?limit=3" });
    expect(r.status).toBe(200);
    expect(r.json.items).toHaveLength(3);
    expect(r.json.items[0].createdAt >= r.json.items[1].createdAt).toBe(true);
  });
});

describe("latest state wins: the preview's count and the pacer's per-item decision", () => {
  const day = 86_400_000;
  let n = 0;
  /** One event (its month's partition made if need be) and its delivery to `sub` in `state`; a dead letter's last answer is
   *  HTTP 418, which no other dead letter here has, so a filter on it spans this test's subscriptions and nothing else. */
  async function put(o: { sub: string; subject: Record<string, string>; ageMs: number; state: "dead_letter" | "delivered" | "pending"; type?: string }) {
    const id = `evt_lsw_${++n}`;
    const at = new Date(Date.now() - o.ageMs).toISOString();
    await db.pool.query("SELECT hl_ensure_partition(t, $1::timestamptz) FROM unnest(ARRAY['events','deliveries','attempts']) t", [at]);
    await db.pool.query(
      `INSERT INTO events (id, type, payload, occurred_at, tenant, subject, subject_values, created_at)
       SELECT $1, $2, '\\x7b7d'::bytea, $3::timestamptz, $4::jsonb->>'tenant', $4::jsonb,
              ARRAY(SELECT v FROM jsonb_each_text($4::jsonb) kv, LATERAL (VALUES (kv.value), (kv.key || ':' || kv.value)) x(v)), $3::timestamptz`,
      [id, o.type ?? "assignment.graded", at, JSON.stringify(o.subject)],
    );
    await db.pool.query(
      `INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, state, attempt_count, total_attempts,
                               dead_letter_reason, dead_lettered_at, last_status_code, delivered_at, event_at)
       VALUES (hl_delivery_key($2, $1), $1, $2, $3, $4, 1, 1,
               CASE WHEN $4 = 'dead_letter' THEN 'exhausted' END, CASE WHEN $4 = 'dead_letter' THEN now() END,
               CASE WHEN $4 = 'dead_letter' THEN 418 END,
               CASE WHEN $4 = 'delivered' THEN now() END, $5::timestamptz)`,
      [id, o.sub, o.type ?? "assignment.graded", o.state, at],
    );
    return id;
  }

  it("agree on every case, and say superseded exactly for a newer event of the same type and subject delivered to the same subscription", async () => {
    await seedSubscription(db, "sub_lsw");
    await seedSubscription(db, "sub_lsw_other");
    const subj = (stu: string, extra: Record<string, string> = {}) => ({ tenant: "lincoln", studentId: stu, assignmentId: "asg_1", ...extra });
    const expected = new Map<string, boolean>();
    const dead = async (name: string, superseded: boolean, o: Partial<Parameters<typeof put>[0]> = {}) =>
      expected.set(await put({ sub: "sub_lsw", subject: subj(name), ageMs: 2 * 3600_000, state: "dead_letter", ...o }), superseded);

    // A newer event of the same type and subject delivered to the same subscription: superseded.
    await dead("s_newer", true);
    await put({ sub: "sub_lsw", subject: subj("s_newer"), ageMs: 60_000, state: "delivered" });
    // Same subject, another type.
    await dead("s_type", false);
    await put({ sub: "sub_lsw", subject: subj("s_type"), ageMs: 60_000, state: "delivered", type: "assignment.submitted" });
    // Delivered to another subscription only.
    await dead("s_othersub", false);
    await put({ sub: "sub_lsw_other", subject: subj("s_othersub"), ageMs: 60_000, state: "delivered" });
    // Only an older event was delivered.
    await dead("s_older", false);
    await put({ sub: "sub_lsw", subject: subj("s_older"), ageMs: 5 * 3600_000, state: "delivered" });
    // The newer event is itself a dead letter (both match; neither is superseded), or still pending.
    await dead("s_newer_dead", false);
    await dead("s_newer_dead", false, { ageMs: 60_000 });
    await dead("s_newer_pending", false);
    await put({ sub: "sub_lsw", subject: subj("s_newer_pending"), ageMs: 60_000, state: "pending" });
    // No subject: never superseded, even by a newer subjectless event delivered.
    expected.set(await put({ sub: "sub_lsw", subject: {}, ageMs: 2 * 3600_000, state: "dead_letter" }), false);
    await put({ sub: "sub_lsw", subject: {}, ageMs: 60_000, state: "delivered" });
    // A newer event whose subject has one more key (its subject_values a superset): another subject.
    await dead("s_superset", false);
    await put({ sub: "sub_lsw", subject: subj("s_superset", { term: "fall" }), ageMs: 60_000, state: "delivered" });
    // The dead letter's event two months back (another partition), the newer one delivered this month: superseded;
    // and one whose newer event, delivered, is in the month between.
    await dead("s_months", true, { ageMs: 62 * day });
    await put({ sub: "sub_lsw", subject: subj("s_months"), ageMs: 60_000, state: "delivered" });
    await dead("s_months_mid", true, { ageMs: 62 * day });
    await put({ sub: "sub_lsw", subject: subj("s_months_mid"), ageMs: 31 * day, state: "delivered" });
    // A newer delivered event of the same subject in an older month (created earlier, occurred later): superseded.
    await dead("s_created_earlier", true);
    await put({ sub: "sub_lsw", subject: subj("s_created_earlier"), ageMs: 33 * day, state: "delivered" });
    await db.pool.query("UPDATE events SET occurred_at = now() WHERE id = $1", [`evt_lsw_${n}`]);

    /** The preview's counts and the pacer's per-item decisions over `filter`'s matches, which must be `want`'s. */
    const agree = async (filter: Record<string, string | number>, want: Map<string, boolean>) => {
      const preview = await create({ dryRun: true, latestStateWins: true, filter });
      expect(preview.status, preview.text).toBe(200);
      expect(preview.json).toMatchObject({ matched: want.size, superseded: [...want.values()].filter(Boolean).length });

      // The pacer's per-item decision on the same rows, from a batch that is never paced.
      const r = await create({ reason: "INC-LSW", latestStateWins: true, filter });
      expect(r.status, r.text).toBe(201);
      await call(cancel.POST, { token: engineer, params: { id: r.json.id } });
      const items = await findNextBatchItems(db.pool, r.json.id, 0, 1000, true);
      const byDelivery = new Map((await db.pool.query("SELECT id, event_id FROM deliveries WHERE subscription_id LIKE 'sub_lsw%'")).rows.map((x) => [x.id, x.event_id]));
      const decided = Object.fromEntries(items.map((i) => [byDelivery.get(i.delivery_id), i.superseded]));
      expect(decided).toEqual(Object.fromEntries(want));
      expect(items.filter((i) => i.superseded)).toHaveLength(preview.json.superseded);
    };
    await agree({ subscriptionId: "sub_lsw" }, expected);

    // Over two subscriptions at once (a filter without one): each dead letter is judged by its own subscription's
    // deliveries. The other subscription's dead letter of s_newer is not superseded by sub_lsw's delivery; its older
    // s_othersub one is superseded by its own.
    const both = new Map(expected);
    both.set(await put({ sub: "sub_lsw_other", subject: subj("s_newer"), ageMs: 2 * 3600_000, state: "dead_letter" }), false);
    both.set(await put({ sub: "sub_lsw_other", subject: subj("s_othersub"), ageMs: 2 * 3600_000, state: "dead_letter" }), true);
    await agree({ statusCode: 418 }, both);
  });
});

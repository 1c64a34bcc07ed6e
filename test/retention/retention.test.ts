// Retention on a real Postgres: a seeded ledger with deliveries of every state
// and age, per-tenant overrides, a run through the API in small batches; then
// exactly the expired finished work is gone (deliveries, attempts, events
// nothing needs) and everything else is kept; the run's record and audit row
// hold counts, never values; counters, the DLQ figures and the per-minute and
// hourly rollups read the same for what is kept; a dry run, bad input and a
// second runner change nothing.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, tableCounts, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { backdate, daysAgo, seedDelivery, seedEvent, seedSubscription, type SeedAttempt } from "../helpers/dashboard-seed";
import * as retention from "../../app/api/v1/retention/route";
import * as retentionRun from "../../app/api/v1/retention/run/route";
import { runRetention } from "../../lib/retention/run-retention";
import { retentionFromEnv } from "../../lib/retention/policy";
import { RETENTION_LOCK } from "../../lib/ledger/sql/retention";
import { rollupAttemptStats, ROLLUP_LOCK } from "../../lib/rollups/sampler";
import { findDeadLetterGauges, findStateCounts } from "../../lib/ledger/sql/counts";
import { findSubscriptionHealth } from "../../lib/dashboard/subscriptions";

let db: TestDb;
let admin: string;
let engineer: string;

/** Seeds one event and its deliveries; returns the delivery ids by subscription. */
async function seed(
  id: string,
  o: { tenant: string | null; ageDays: number; deliveries: { sub: string; state: string; finishedDaysAgo?: number }[] },
): Promise<Record<string, string>> {
  await seedEvent(db.pool, { id, createdAt: daysAgo(o.ageDays), subject: o.tenant ? { tenant: o.tenant, studentId: `stu_${id}` } : { studentId: `stu_${id}` } });
  const out: Record<string, string> = {};
  for (const d of o.deliveries) {
    const fin = daysAgo(d.finishedDaysAgo ?? o.ageDays);
    const attempts: SeedAttempt[] =
      d.state === "pending"
        ? []
        : [
            { at: new Date(fin.getTime() - 60_000), outcome: "retry", status: 500, errorClass: "http_5xx", excerpt: `oops ${id}` },
            {
              at: fin,
              outcome: d.state === "delivered" ? "delivered" : d.state === "scheduled" || d.state === "in_flight" ? "retry" : "dead_letter",
              status: d.state === "delivered" ? 200 : 422,
            },
          ];
    const seeded = d.state === "resolved" ? "dead_letter" : d.state;
    const did = await seedDelivery(db.pool, { subscriptionId: d.sub, eventId: id, state: seeded, attempts });
    await backdate(db.pool, did, daysAgo(o.ageDays));
    if (d.state === "resolved")
      await db.pool.query(
        `UPDATE deliveries SET state = 'resolved', resolution = 'discarded', resolved_at = $2, resolved_by = 'user:ops@example.test', resolution_reason = 'not needed' WHERE id = $1`,
        [did, fin],
      );
    if (d.state === "in_flight")
      await db.pool.query(`UPDATE deliveries SET lease_owner = 'w-x', lease_until = now() + interval '1 minute', leased_at = now() WHERE id = $1`, [did]);
    out[d.sub] = did;
  }
  return out;
}

const ids = async (table: string, col = "id") => (await db.pool.query(`SELECT ${col} AS id FROM ${table} ORDER BY 1`)).rows.map((r) => r.id as string);

/** What the dashboard shows for kept data: counts by state, the DLQ's depth and oldest, the rollups, the subscriptions' health. */
async function figures() {
  const now = new Date();
  const counts = (await findStateCounts(db.pool))
    .filter((c) => !["delivered", "resolved"].includes(c.state))
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  const dlq = (await findDeadLetterGauges(db.pool)).map((g) => ({ ...g, now: null })).sort((a, b) => a.subscriptionId.localeCompare(b.subscriptionId));
  const minute = (await db.pool.query("SELECT * FROM attempt_stats_minute ORDER BY subscription_id, bucket")).rows;
  const hour = (await db.pool.query("SELECT * FROM attempt_stats_hour ORDER BY subscription_id, bucket")).rows;
  const health = (await findSubscriptionHealth({ now }, db.pool)).map((h) => ({ ...h, counts: { ...h.counts } }));
  return { counts, dlq, minute, hour, health };
}

/** delivery_state_counts summed must equal the rows, state by state. */
async function countersMatchRows() {
  const kept = (await findStateCounts(db.pool)).map((c) => `${c.subscriptionId}/${c.state}/${c.reason}=${c.n}`).sort();
  const rows = (
    await db.pool.query(
      `SELECT subscription_id, state, CASE WHEN state = 'dead_letter' THEN coalesce(dead_letter_reason, '') ELSE '' END AS reason, count(*)::int AS n
         FROM deliveries GROUP BY 1, 2, 3`,
    )
  ).rows
    .map((r) => `${r.subscription_id}/${r.state}/${r.reason}=${r.n}`)
    .sort();
  expect(kept).toEqual(rows);
}

let s: Record<string, Record<string, string>> = {};

beforeAll(async () => {
  db = await createTestDatabase();
  admin = await tokenFor(db.prisma, "admin");
  engineer = await tokenFor(db.prisma, "engineer");
  await seedSubscription(db.pool, { id: "sub_lin", name: "Lincoln", tenant: "lincoln" });
  await seedSubscription(db.pool, { id: "sub_jef", name: "Jefferson", tenant: "jefferson" });
  await seedSubscription(db.pool, { id: "sub_all", name: "Global" });
  s = {
    // Expired (default 90 days): removed with their attempts and events.
    oldDelivered: await seed("evt_old_delivered", { tenant: "lincoln", ageDays: 120, deliveries: [{ sub: "sub_lin", state: "delivered" }] }),
    oldResolved: await seed("evt_old_resolved", { tenant: "lincoln", ageDays: 120, deliveries: [{ sub: "sub_lin", state: "resolved", finishedDaysAgo: 95 }] }),
    oldNoTenant: await seed("evt_old_global", { tenant: null, ageDays: 100, deliveries: [{ sub: "sub_all", state: "delivered" }] }),
    oldNoDeliveries: await seed("evt_old_nobody", { tenant: "lincoln", ageDays: 100, deliveries: [] }),
    // Never removed whatever their age: unfinished or dead-lettered, and their events.
    oldDead: await seed("evt_old_dead", { tenant: "lincoln", ageDays: 120, deliveries: [{ sub: "sub_lin", state: "dead_letter" }] }),
    oldScheduled: await seed("evt_old_scheduled", { tenant: "lincoln", ageDays: 120, deliveries: [{ sub: "sub_lin", state: "scheduled" }] }),
    oldPending: await seed("evt_old_pending", { tenant: "lincoln", ageDays: 120, deliveries: [{ sub: "sub_lin", state: "pending" }] }),
    oldInFlight: await seed("evt_old_inflight", { tenant: "lincoln", ageDays: 120, deliveries: [{ sub: "sub_lin", state: "in_flight" }] }),
    // A fan-out: the delivered half goes, the dead letter and the event stay.
    oldMixed: await seed("evt_old_mixed", {
      tenant: "lincoln",
      ageDays: 120,
      deliveries: [
        { sub: "sub_lin", state: "delivered" },
        { sub: "sub_all", state: "dead_letter" },
      ],
    }),
    // Old, but finished recently (a dead letter resolved last week): kept.
    lateResolved: await seed("evt_late_resolved", { tenant: "lincoln", ageDays: 120, deliveries: [{ sub: "sub_lin", state: "resolved", finishedDaysAgo: 5 }] }),
    // Recent: kept.
    recent: await seed("evt_recent", { tenant: "lincoln", ageDays: 10, deliveries: [{ sub: "sub_lin", state: "delivered" }] }),
    // Jefferson keeps 200 days (an override): 150 days kept, 250 removed.
    jefKept: await seed("evt_jef_150", { tenant: "jefferson", ageDays: 150, deliveries: [{ sub: "sub_jef", state: "delivered" }] }),
    jefGone: await seed("evt_jef_250", { tenant: "jefferson", ageDays: 250, deliveries: [{ sub: "sub_jef", state: "delivered" }] }),
  };
  // The worker's sampler folds attempts into the per-minute and hourly stats; the seeded attempts are settled at once.
  await rollupAttemptStats(db.pool, { settleSeconds: 0, maxChunks: 100 });
});

afterEach(() => {
  delete process.env.HOOKLEDGER_RETENTION_DAYS;
  delete process.env.HOOKLEDGER_PAYLOAD_RETENTION_DAYS;
});

afterAll(async () => {
  await db?.close();
});

const put = (body: unknown, token = admin) => call(retention.PUT, { method: "PUT", token, body });
const run = (body: unknown, token = admin) => call(retentionRun.POST, { token, body });

describe("bad input changes nothing", () => {
  it("days below 1, absurd or not a number, an unknown tenant, payload days above the days: 400, no override, no audit row", async () => {
    const before = await tableCounts(db.pool);
    const cases: [unknown, RegExp][] = [
      [{ tenant: "jefferson", retentionDays: 0 }, /retentionDays must be at least 1 day/],
      [{ tenant: "jefferson", retentionDays: -5 }, /at least 1 day/],
      [{ tenant: "jefferson", retentionDays: 1_000_000 }, /at most 36500 days/],
      [{ tenant: "jefferson", retentionDays: "90" }, /retentionDays must be a whole number of days/],
      [{ tenant: "jefferson", retentionDays: 2.5 }, /whole number/],
      [{ tenant: "jefferson", retentionDays: 30, payloadRetentionDays: 60 }, /must be at most retentionDays/],
      [{ tenant: "narnia", retentionDays: 30 }, /tenant "narnia" is unknown/],
      [{ retentionDays: 30 }, /tenant is required/],
    ];
    for (const [body, msg] of cases) {
      const r = await put(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.error.message).toMatch(msg);
    }
    expect((await db.pool.query("SELECT count(*)::int AS n FROM retention_policies")).rows[0].n).toBe(0);
    expect(await tableCounts(db.pool)).toEqual(before);
  });

  it("a malformed HOOKLEDGER_RETENTION_DAYS or payload days stops the process with a message naming the variable", () => {
    for (const v of ["0", "-1", "abc", "1e3", "99999999"]) {
      process.env.HOOKLEDGER_RETENTION_DAYS = v;
      expect(() => retentionFromEnv()).toThrow(/HOOKLEDGER_RETENTION_DAYS must be a whole number from 1 to 36500/);
    }
    process.env.HOOKLEDGER_RETENTION_DAYS = "30";
    process.env.HOOKLEDGER_PAYLOAD_RETENTION_DAYS = "31";
    expect(() => retentionFromEnv()).toThrow(/HOOKLEDGER_PAYLOAD_RETENTION_DAYS \(31\) must be at most HOOKLEDGER_RETENTION_DAYS \(30\)/);
    process.env.HOOKLEDGER_PAYLOAD_RETENTION_DAYS = "zero";
    expect(() => retentionFromEnv()).toThrow(/HOOKLEDGER_PAYLOAD_RETENTION_DAYS must be a whole number/);
    delete process.env.HOOKLEDGER_RETENTION_DAYS;
    delete process.env.HOOKLEDGER_PAYLOAD_RETENTION_DAYS;
    expect(retentionFromEnv()).toEqual({ retentionDays: 90, payloadRetentionDays: null });
  });

  it("an engineer may neither read nor run retention (admins only)", async () => {
    expect((await run({ dryRun: true }, engineer)).status).toBe(403);
    expect((await call(retention.GET, { token: engineer })).status).toBe(403);
  });
});

describe("a run", () => {
  it("an override for a known tenant is set and audited", async () => {
    const r = await put({ tenant: "jefferson", retentionDays: 200 });
    expect(r.status).toBe(200);
    expect(r.json.overrides).toEqual([{ tenant: "jefferson", retentionDays: 200, payloadRetentionDays: null }]);
    const audit = (await db.pool.query("SELECT actor, tenant_id, details FROM audit_entries WHERE action = 'retention.policy'")).rows;
    // Named with the district, so the district's own Audit page shows who changed how long its data is kept.
    expect(audit).toEqual([{ actor: "token:test-admin", tenant_id: "jefferson", details: { before: null, after: { retentionDays: 200, payloadRetentionDays: null } } }]);
  });

  it("a dry run counts what would go and changes nothing, records nothing", async () => {
    const before = await tableCounts(db.pool);
    const r = await run({ dryRun: true });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ id: null, dryRun: true, status: "preview", deliveries: 5, attempts: 10, events: 5, expunged: 0 });
    expect(await tableCounts(db.pool)).toEqual(before);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM retention_runs")).rows[0].n).toBe(0);
  });

  it("removes exactly the expired finished deliveries, their attempts and the events nothing needs; keeps the rest and what the dashboard shows", async () => {
    const before = await figures();
    const deliveriesBefore = await ids("deliveries");
    const eventsBefore = await ids("events");

    const r = await runRetention(db.pool, db.prisma, { trigger: "manual", actor: "token:test-admin", batch: 2 });
    expect(r).toMatchObject({ dryRun: false, status: "finished", deliveries: 5, attempts: 10, events: 5, expunged: 0, partitions: 0 });

    const gone = [s.oldDelivered.sub_lin, s.oldResolved.sub_lin, s.oldNoTenant.sub_all, s.oldMixed.sub_lin, s.jefGone.sub_jef];
    expect(await ids("deliveries")).toEqual(deliveriesBefore.filter((d) => !gone.includes(d)).sort());
    expect(await ids("events")).toEqual(
      eventsBefore.filter((e) => !["evt_old_delivered", "evt_old_resolved", "evt_old_global", "evt_old_nobody", "evt_jef_250"].includes(e)).sort(),
    );
    // The ids' keys (migration 0021) go with their events.
    expect(await ids("event_keys")).toEqual(await ids("events"));
    // No attempt of a removed delivery is left, every attempt of a kept one is.
    expect((await db.pool.query("SELECT count(*)::int AS n FROM attempts WHERE delivery_id = ANY($1)", [gone])).rows[0].n).toBe(0);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM attempts a LEFT JOIN deliveries d ON d.id = a.delivery_id WHERE d.id IS NULL")).rows[0].n).toBe(0);
    // Kept: dead letters, unfinished ones, recent, late-resolved, Jefferson's 150-day-old one, and the dead letter's event in the fan-out.
    for (const k of [
      s.oldDead.sub_lin,
      s.oldScheduled.sub_lin,
      s.oldPending.sub_lin,
      s.oldInFlight.sub_lin,
      s.oldMixed.sub_all,
      s.lateResolved.sub_lin,
      s.recent.sub_lin,
      s.jefKept.sub_jef,
    ])
      expect(await ids("deliveries")).toContain(k);

    // The dashboard's figures for kept data do not move; the counters equal the rows.
    const after = await figures();
    expect(after.counts).toEqual(before.counts);
    expect(after.dlq).toEqual(before.dlq);
    expect(after.minute).toEqual(before.minute);
    expect(after.hour).toEqual(before.hour);
    // Rates, latency and queue counts are the same; a subscription's "last error" is read from the attempts, so one that was
    // itself expired (older than the policy) gives way to the latest kept one, and a recent one stays.
    const noLast = (h: typeof before.health) => h.map(({ lastError: _e, ...rest }) => rest);
    expect(noLast(after.health)).toEqual(noLast(before.health));
    for (const [i, h] of before.health.entries())
      if (h.lastError && new Date(h.lastError.at).getTime() > daysAgo(90).getTime()) expect(after.health[i].lastError).toEqual(h.lastError);
    await countersMatchRows();

    // The record: counts and the policy, who and when; no id, key or value of what went.
    const rec = (await db.pool.query("SELECT * FROM retention_runs")).rows;
    expect(rec).toHaveLength(1);
    expect(rec[0]).toMatchObject({
      trigger: "manual",
      actor: "token:test-admin",
      status: "finished",
      deliveries_removed: 5,
      attempts_removed: 10,
      events_removed: 5,
      events_expunged: 0,
    });
    expect(rec[0].policy).toEqual({
      retentionDays: 90,
      payloadRetentionDays: null,
      overrides: [{ tenant: "jefferson", retentionDays: 200, payloadRetentionDays: null }],
    });
    expect(JSON.stringify(rec[0])).not.toMatch(/evt_|stu_|dlv_/);
    const audit = (await db.pool.query("SELECT actor, target_id, details FROM audit_entries WHERE action = 'retention.run'")).rows;
    expect(audit).toEqual([
      {
        actor: "token:test-admin",
        target_id: rec[0].id,
        details: { retentionDays: 90, payloadRetentionDays: null, deliveries: 5, attempts: 10, events: 5, expunged: 0, partitions: 0 },
      },
    ]);

    // A second run finds nothing more.
    const again = await runRetention(db.pool, db.prisma, { trigger: "manual", actor: "token:test-admin" });
    expect(again).toMatchObject({ deliveries: 0, attempts: 0, events: 0 });
  });

  it("a delivery whose attempts the rollup has not counted yet is kept until they are", async () => {
    const d = await seed("evt_unrolled", { tenant: "lincoln", ageDays: 120, deliveries: [{ sub: "sub_lin", state: "delivered" }] });
    // The runner folds settled attempts first; while another process holds the rollup (a sampler mid-fold), it cannot.
    const sampler = await db.pool.connect();
    try {
      await sampler.query("BEGIN");
      await sampler.query("SELECT pg_advisory_xact_lock($1)", [ROLLUP_LOCK]);
      const r1 = await runRetention(db.pool, db.prisma, { trigger: "manual", actor: "token:test-admin" });
      expect(r1).toMatchObject({ deliveries: 0, events: 0 });
    } finally {
      await sampler.query("ROLLBACK");
      sampler.release();
    }
    expect(await ids("deliveries")).toContain(d.sub_lin);
    const r2 = await runRetention(db.pool, db.prisma, { trigger: "manual", actor: "token:test-admin" });
    expect(r2).toMatchObject({ deliveries: 1, attempts: 2, events: 1 });
  });

  it("GET shows the policy, the oldest data kept, the last runs and the tables' sizes", async () => {
    const r = await call(retention.GET, { token: admin });
    expect(r.status).toBe(200);
    expect(r.json.policy.retentionDays).toBe(90);
    expect(r.json.runs[0]).toMatchObject({ trigger: "manual", status: "finished" });
    expect(r.json.runs.at(-1)).toMatchObject({ deliveries: 5, attempts: 10, events: 5 });
    expect(new Date(r.json.oldest.event).getTime()).toBeLessThan(daysAgo(119).getTime());
    expect(r.json.tables.map((t: { name: string }) => t.name)).toEqual(["attempts", "deliveries", "events"]);
    expect(r.json.tables.every((t: { bytes: number }) => t.bytes > 0)).toBe(true);
  });
});

/** A started run's record once it has ended (a POST answers 202 as the run starts). */
async function runFinished(id: string) {
  for (const end = Date.now() + 30_000; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
    const { rows } = await db.pool.query("SELECT * FROM retention_runs WHERE id = $1", [id]);
    if (rows[0] && rows[0].status !== "running") return rows[0];
  }
  throw new Error(`retention run ${id} did not finish in 30 s`);
}

describe("a run through the API", () => {
  it("answers 202 with the run's record as it starts; the run goes on, finishes, and is audited", async () => {
    await seed("evt_api_run", { tenant: "lincoln", ageDays: 120, deliveries: [{ sub: "sub_lin", state: "delivered" }] });
    await rollupAttemptStats(db.pool, { settleSeconds: 0, maxChunks: 100 });
    const r = await run({});
    expect(r.status).toBe(202);
    expect(r.json).toMatchObject({ id: expect.stringMatching(/^rr_/), status: "running", trigger: "manual", dryRun: false });
    const row = await runFinished(r.json.id);
    expect(row).toMatchObject({ status: "finished", deliveries_removed: 1, events_removed: 1 });
    expect(await ids("events")).not.toContain("evt_api_run");
    const audit = await db.pool.query("SELECT details FROM audit_entries WHERE action = 'retention.run' AND target_id = $1", [r.json.id]);
    expect(audit.rows[0].details).toMatchObject({ deliveries: 1, events: 1 });
    const overview = await call(retention.GET, { token: admin });
    expect(overview.json.runs[0]).toMatchObject({ id: r.json.id, status: "finished", deliveries: 1, events: 1 });
  });
});

describe("one runner at a time", () => {
  it("two runs at once do the work once: the second is refused (409) or finds nothing", async () => {
    for (let i = 0; i < 6; i++) await seed(`evt_twice_${i}`, { tenant: "lincoln", ageDays: 120, deliveries: [{ sub: "sub_lin", state: "delivered" }] });
    await rollupAttemptStats(db.pool, { settleSeconds: 0, maxChunks: 100 });
    const [a, b] = await Promise.all([run({}), run({})]);
    const started = [a, b].filter((x) => x.status === 202);
    const refused = [a, b].filter((x) => x.status !== 202);
    expect(started.length).toBeGreaterThanOrEqual(1);
    for (const x of refused) {
      expect(x.status).toBe(409);
      expect(x.json.error.message).toMatch(/A retention run is already running/);
    }
    const done = await Promise.all(started.map((x) => runFinished(x.json.id)));
    expect(done.reduce((n, x) => n + x.deliveries_removed, 0)).toBe(6);
    expect(done.reduce((n, x) => n + x.events_removed, 0)).toBe(6);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM events WHERE id LIKE 'evt_twice_%'")).rows[0].n).toBe(0);
  });

  it("while another process holds the lock, the daily run skips and a manual run is a 409; nothing removed", async () => {
    await seed("evt_locked", { tenant: "lincoln", ageDays: 120, deliveries: [{ sub: "sub_lin", state: "delivered" }] });
    await rollupAttemptStats(db.pool, { settleSeconds: 0, maxChunks: 100 });
    const holder = await db.pool.connect();
    try {
      await holder.query("SELECT pg_advisory_lock($1)", [RETENTION_LOCK]);
      const runs = (await db.pool.query("SELECT count(*)::int AS n FROM retention_runs")).rows[0].n;
      expect(await runRetention(db.pool, db.prisma, { trigger: "schedule", actor: "system" })).toBeNull();
      const r = await run({});
      expect(r.status).toBe(409);
      expect((await db.pool.query("SELECT count(*)::int AS n FROM retention_runs")).rows[0].n).toBe(runs);
      expect(await ids("events")).toContain("evt_locked");
    } finally {
      await holder.query("SELECT pg_advisory_unlock($1)", [RETENTION_LOCK]);
      holder.release();
    }
    const r = await runRetention(db.pool, db.prisma, { trigger: "schedule", actor: "system" });
    expect(r).toMatchObject({ trigger: "schedule", by: "system", deliveries: 1, events: 1 });
    // The daily run leaves its record and no audit row (the record is its trace).
    expect((await db.pool.query("SELECT count(*)::int AS n FROM audit_entries WHERE action = 'retention.run' AND target_id = $1", [r!.id])).rows[0].n).toBe(0);
    expect((await db.pool.query("SELECT actor, trigger FROM retention_runs WHERE id = $1", [r!.id])).rows[0]).toEqual({ actor: "system", trigger: "schedule" });
  });
});

describe("the walk", () => {
  it("moves past rows it keeps whose times carry microseconds (an event still needed, a delivery locked by a sender): the run ends", async () => {
    // Postgres keeps microseconds; a keyset carried as a JS Date (milliseconds) compared the last row after itself,
    // so a kept row at the end of a batch was found again forever (a hung run, seen on a ledger timed by now()).
    // Past the 90-day cutoff but in the month holding it, which no month swap takes: the rows' walk meets them.
    const cutoffMonth = Date.UTC(new Date(Date.now() - 90 * 86_400_000).getUTCFullYear(), new Date(Date.now() - 90 * 86_400_000).getUTCMonth(), 1);
    const ageDays = (Date.now() - cutoffMonth) / 86_400_000 - 1 / 86_400;
    await seed("evt_us_needed", { tenant: null, ageDays, deliveries: [{ sub: "sub_all", state: "dead_letter" }] });
    const kept = await seed("evt_us_locked", { tenant: null, ageDays, deliveries: [{ sub: "sub_all", state: "delivered" }] });
    // An event's time moves with its key and its deliveries' event_at (one time, three places: migrations 0021, 0029).
    for (const t of ["events", "event_keys"])
      await db.pool.query(`UPDATE ${t} SET created_at = created_at + interval '123 microseconds' WHERE id IN ('evt_us_needed', 'evt_us_locked')`);
    await db.pool.query("UPDATE deliveries SET event_at = event_at + interval '123 microseconds' WHERE event_id IN ('evt_us_needed', 'evt_us_locked')");
    await db.pool.query("UPDATE deliveries SET delivered_at = delivered_at + interval '456 microseconds' WHERE id = $1", [kept.sub_all]);
    await rollupAttemptStats(db.pool, { settleSeconds: 0, maxChunks: 100 });
    const sender = await db.pool.connect();
    try {
      await sender.query("BEGIN");
      await sender.query("SELECT id FROM deliveries WHERE id = $1 FOR UPDATE", [kept.sub_all]);
      const run = runRetention(db.pool, db.prisma, { trigger: "manual", actor: "test", batch: 1 });
      const hung = new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error("the retention run did not end: its walk found a kept row again")), 20_000).unref(),
      );
      await Promise.race([run, hung]);
    } finally {
      await sender.query("ROLLBACK");
      sender.release();
    }
    expect(await ids("events")).toEqual(expect.arrayContaining(["evt_us_needed", "evt_us_locked"]));
  }, 60_000);
});

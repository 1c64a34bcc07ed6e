// `hookledger retention` as an operator runs it (the real CLI in a child
// process, on a real Postgres): a dry run prints what would go and changes
// nothing; a run prints what it removed and leaves its record and audit row;
// bad input (days below 1 or absurd, an unknown tenant, a malformed
// HOOKLEDGER_RETENTION_DAYS) exits 2 with the message and changes nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, tableCounts, type TestDb } from "../helpers/db";
import { runCli } from "../helpers/cli-run";
import { backdate, daysAgo, seedDelivery, seedEvent, seedSubscription } from "../helpers/dashboard-seed";
import { rollupAttemptStats } from "../../lib/rollups/sampler";

let db: TestDb;

beforeAll(async () => {
  db = await createTestDatabase();
  await seedSubscription(db.pool, { id: "sub_lin", name: "Lincoln", tenant: "lincoln" });
  for (const [id, age, state] of [
    ["evt_old", 120, "delivered"],
    ["evt_dead", 120, "dead_letter"],
    ["evt_new", 3, "delivered"],
  ] as const) {
    await seedEvent(db.pool, { id, createdAt: daysAgo(age), subject: { tenant: "lincoln" } });
    const d = await seedDelivery(db.pool, {
      subscriptionId: "sub_lin",
      eventId: id,
      state,
      attempts: [{ at: daysAgo(age), outcome: state, status: state === "delivered" ? 200 : 422 }],
    });
    await backdate(db.pool, d, daysAgo(age));
  }
  await rollupAttemptStats(db.pool, { settleSeconds: 0, maxChunks: 100 });
}, 60_000);

afterAll(async () => {
  await db?.close();
});

const env = () => ({ DATABASE_URL: db.url });
const runs = async () => (await db.pool.query("SELECT count(*)::int AS n FROM retention_runs")).rows[0].n;

describe("hookledger retention", () => {
  it("bad input exits 2 with the message; nothing changes", async () => {
    const before = await tableCounts(db.pool);
    const cases: [string[], Record<string, string>, RegExp][] = [
      [["retention", "set", "--tenant", "lincoln", "--days", "0"], {}, /--days: retentionDays must be at least 1 day/],
      [["retention", "set", "--tenant", "lincoln", "--days", "9999999"], {}, /at most 36500 days/],
      [["retention", "set", "--tenant", "lincoln", "--days", "ninety"], {}, /--days must be a whole number of days/],
      [["retention", "set", "--tenant", "lincoln", "--days", "30", "--payload-days", "60"], {}, /must be at most retentionDays/],
      [["retention", "set", "--tenant", "narnia", "--days", "30"], {}, /tenant "narnia" is unknown/],
      [["retention", "run"], { HOOKLEDGER_RETENTION_DAYS: "0" }, /HOOKLEDGER_RETENTION_DAYS must be a whole number from 1 to 36500/],
      [["retention", "run", "--dry-run"], { HOOKLEDGER_RETENTION_DAYS: "abc" }, /HOOKLEDGER_RETENTION_DAYS must be a whole number/],
      [["retention", "run"], { HOOKLEDGER_RETENTION_DAYS: "30", HOOKLEDGER_PAYLOAD_RETENTION_DAYS: "45" }, /HOOKLEDGER_PAYLOAD_RETENTION_DAYS \(45\) must be at most/],
    ];
    for (const [args, extra, msg] of cases) {
      const r = await runCli(args, { ...env(), ...extra });
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(msg);
    }
    expect(await tableCounts(db.pool)).toEqual(before);
    expect(await runs()).toBe(0);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM retention_policies")).rows[0].n).toBe(0);
  });

  it("--dry-run prints what would go and changes nothing", async () => {
    const before = await tableCounts(db.pool);
    const r = await runCli(["retention", "run", "--dry-run"], env());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Policy: finished deliveries kept 90 days; payloads kept as long as the delivery\./);
    expect(r.stdout).toMatch(/Dry run: a run now would remove 1 finished deliveries with 1 attempts, 1 events; 0 payloads expunged\./);
    expect(r.stdout).toMatch(/Dry run: nothing changed\./);
    expect(await tableCounts(db.pool)).toEqual(before);
    expect(await runs()).toBe(0);
  });

  it("a run prints what it removed, leaves its record and an audit row by the OS user", async () => {
    const r = await runCli(["retention", "run"], env());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Retention run rr_\w+ finished in [\d.]+ s: removed 1 finished deliveries with 1 attempts, 1 events; 0 payloads expunged\./);
    expect((await db.pool.query("SELECT id FROM events ORDER BY id")).rows.map((x) => x.id)).toEqual(["evt_dead", "evt_new"]);
    const rec = (await db.pool.query("SELECT actor, trigger, deliveries_removed FROM retention_runs")).rows;
    expect(rec).toEqual([{ actor: expect.stringMatching(/^cli:/), trigger: "manual", deliveries_removed: 1 }]);
    expect((await db.pool.query("SELECT actor FROM audit_entries WHERE action = 'retention.run'")).rows).toEqual([{ actor: rec[0].actor }]);
    const show = await runCli(["retention", "show"], env());
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/manual\s+finished by cli:.*: 1 deliveries, 1 attempts, 1 events removed, 0 expunged/);
  });

  it("set and --clear a tenant's override", async () => {
    const set = await runCli(["retention", "set", "--tenant", "lincoln", "--days", "30", "--payload-days", "7"], env());
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toMatch(/Tenant lincoln: finished deliveries kept 30 days; payloads 7 days\./);
    const clear = await runCli(["retention", "set", "--tenant", "lincoln", "--clear"], env());
    expect(clear.code, clear.stderr).toBe(0);
    expect(clear.stdout).toMatch(/Tenant lincoln follows the environment again: 90 days/);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM audit_entries WHERE action = 'retention.policy'")).rows[0].n).toBe(2);
  });
});

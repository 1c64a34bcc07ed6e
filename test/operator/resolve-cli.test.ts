// `hookledger resolve` as an operator runs it: the real CLI in a child process
// against a real Postgres. A dry run changes nothing; the resolve honours the
// filter (a disabled subscription's gone letters) and audits as the CLI user.
import { runCli } from "../helpers/cli-run";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, tableCounts, type TestDb } from "../helpers/db";
import { seedDeadLetters, seedSubscription } from "../helpers/redrive-helpers";

let db: TestDb;

beforeAll(async () => {
  db = await createTestDatabase();
  await seedSubscription(db, "sub_westfield", undefined, "disabled");
  await seedDeadLetters(db, { subscriptionId: "sub_westfield", n: 12, prefix: "evt_wg_", statusCode: 410, reason: "gone" });
  await seedDeadLetters(db, { subscriptionId: "sub_westfield", n: 2, prefix: "evt_wp_", statusCode: 422, reason: "permanent" });
});
afterAll(async () => db?.close());

const cli = (...args: string[]) => runCli(args, { DATABASE_URL: db.url });

describe("hookledger resolve", () => {
  it("--dry-run prints the count and changes nothing; without --reason or --resolution it refuses (exit 2) and changes nothing", async () => {
    const before = await tableCounts(db.pool);
    const dry = await cli("resolve", "--subscription", "sub_westfield", "--dead-letter-reason", "gone", "--resolution", "discarded", "--dry-run");
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/Matched 12 dead-lettered deliveries/);
    expect(dry.stdout).toMatch(/Dry run: nothing changed/);
    const noReason = await cli("resolve", "--subscription", "sub_westfield", "--resolution", "discarded");
    expect(noReason.code).toBe(2);
    expect(noReason.stderr).toMatch(/--reason is required/);
    const noResolution = await cli("resolve", "--subscription", "sub_westfield", "--reason", "gone for good, INC-1");
    expect(noResolution.code).toBe(2);
    const badResolution = await cli("resolve", "--subscription", "sub_westfield", "--resolution", "forgotten", "--reason", "gone for good, INC-1");
    expect(badResolution.code).not.toBe(0);
    expect(await tableCounts(db.pool)).toEqual(before);
  });

  it("resolves the gone letters of a disabled subscription and leaves the rest; audited as the CLI user", async () => {
    const r = await cli(
      "resolve",
      "--subscription",
      "sub_westfield",
      "--dead-letter-reason",
      "gone",
      "--resolution",
      "discarded",
      "--reason",
      "Westfield decommissioned, INC-2240",
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Resolved 12 as discarded/);
    const { rows } = await db.pool.query("SELECT state, count(*)::int AS n FROM deliveries WHERE subscription_id = 'sub_westfield' GROUP BY 1 ORDER BY 1");
    expect(rows).toEqual([
      { state: "dead_letter", n: 2 },
      { state: "resolved", n: 12 },
    ]);
    const audit = await db.pool.query("SELECT actor, action, count(*)::int AS n FROM audit_entries WHERE action LIKE '%resolve' GROUP BY 1, 2 ORDER BY 2");
    expect(audit.rows.map((a) => [a.action, a.n])).toEqual([
      ["delivery.resolve", 12],
      ["dlq.resolve", 1],
    ]);
    expect(audit.rows[0].actor).toMatch(/^cli:/);
  });
});

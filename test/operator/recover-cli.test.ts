// `hookledger recover` and `hookledger backfill` as an operator runs them: the
// real CLI in a child process against a real Postgres (the batches are paced
// by the CLI's own pacer; sending them is the worker's job, covered by
// test/operator/recover.test.ts and test/operator/backfill.test.ts).
import { runCli } from "../helpers/cli-run";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, tableCounts, type TestDb } from "../helpers/db";
import { createSub, seedEvents } from "../helpers/worker-helpers";

let db: TestDb;

beforeAll(async () => {
  db = await createTestDatabase();
  await createSub(db.pool, { id: "sub_lincoln", url: "https://lincoln.example.test/hooks" });
  await seedEvents(db.pool, "evt_cli_", 12, ["sub_lincoln"]);
  // As if the worker had delivered them.
  await db.pool.query("UPDATE deliveries SET state = 'delivered', delivered_at = now()");
  await createSub(db.pool, { id: "sub_new", url: "https://new.example.test/hooks" });
});
afterAll(async () => db?.close());

const cli = (...args: string[]) => runCli(args, { DATABASE_URL: db.url });

describe("hookledger recover", () => {
  it("--dry-run prints the count by state and changes nothing; refusals say what is wrong and change nothing", async () => {
    const before = await tableCounts(db.pool);
    // A preview changes nothing, so it needs no reason (as redrive --dry-run does not).
    const r = await cli("recover", "--subscription", "sub_lincoln", "--since", "1h", "--dry-run");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Matched 12 deliveries of sub_lincoln created between .* \(12 delivered\)\./);
    expect(r.stdout).toMatch(/… and 2 more/);
    expect(r.stdout).toMatch(/Dry run: nothing changed/);
    const noReason = await cli("recover", "--subscription", "sub_lincoln", "--since", "1h");
    expect(noReason.code).toBe(2);
    expect(noReason.stderr).toMatch(/--reason is required: say why.*Use --dry-run to preview/);
    // A usage mistake the option parser finds exits 2 as well, like the commands' own checks.
    const typo = await cli("recover", "--subscription", "sub_lincoln", "--since", "1h", "--reasn", "INC-88");
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/unknown option '--reasn'/);
    const backwards = await cli("recover", "--subscription", "sub_lincoln", "--since", "1h", "--until", "2h", "--reason", "INC-88");
    expect(backwards.code).toBe(2);
    expect(backwards.stderr).toMatch(/since must be before until/);
    const rate = await cli("recover", "--subscription", "sub_lincoln", "--since", "1h", "--reason", "INC-88", "--rate", "9000");
    expect(rate.code).toBe(2);
    expect(rate.stderr).toMatch(/--rate must be a whole number from 1 to 5000/);
    const unknown = await cli("recover", "--subscription", "sub_nope", "--since", "1h", "--reason", "INC-88");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/Subscription sub_nope does not exist/);
    expect(await tableCounts(db.pool)).toEqual(before);
    expect(await db.prisma.redriveBatch.count()).toBe(0);
  });

  it("creates the batch as the CLI user and follows it to done: every delivery of the window moved back to the queue once", async () => {
    const r = await cli("recover", "--subscription", "sub_lincoln", "--since", "1h", "--reason", "INC-88 lost Tuesday", "--rate", "50");
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toMatch(/Batch rdb_\w+ \(recover\): 12 at 50\/s/);
    expect(r.stdout).toMatch(/done\s+sent again 12\/12, skipped 0, remaining 0/);
    // Every one back in the queue and none sent (no worker here): the CLI says so in the batch page's words.
    expect(r.stdout).toMatch(/^Done: 12 still on their way \(they are sent as usual; follow them on \/redrives\/rdb_\w+\)$/m);
    const { rows } = await db.pool.query("SELECT state, next_trigger, count(*)::int AS n FROM deliveries GROUP BY 1, 2");
    expect(rows).toEqual([{ state: "pending", next_trigger: "resend", n: 12 }]);
    const audit = await db.pool.query("SELECT actor FROM audit_entries WHERE action = 'recover.create'");
    expect(audit.rows[0].actor).toMatch(/^cli:/);
  });
});

describe("hookledger backfill", () => {
  it("creates the new subscription's deliveries once; a second run finds nothing to create", async () => {
    const dry = await cli("backfill", "--subscription", "sub_new", "--since", "1h", "--dry-run");
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/^12 events received between .* match sub_new and have no delivery for it\./);
    const noReason = await cli("backfill", "--subscription", "sub_new", "--since", "1h");
    expect(noReason.code).toBe(2);
    expect(noReason.stderr).toMatch(/hookledger backfill: --reason is required/);
    const r = await cli("backfill", "--subscription", "sub_new", "--since", "1h", "--reason", "ONBOARD-88", "--rate", "100");
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toMatch(/done\s+created 12\/12/);
    expect(r.stdout).toMatch(/^Done: 12 still on their way \(they are sent as usual; follow them on \/redrives\/rdb_\w+\)$/m);
    const n = async () => (await db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE subscription_id = 'sub_new'")).rows[0].n;
    expect(await n()).toBe(12);
    const before = await tableCounts(db.pool);
    const again = await cli("backfill", "--subscription", "sub_new", "--since", "1h", "--reason", "ONBOARD-88");
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^0 events received/);
    expect(again.stdout).toMatch(/Nothing to backfill/);
    expect(await tableCounts(db.pool)).toEqual(before);
  });
});

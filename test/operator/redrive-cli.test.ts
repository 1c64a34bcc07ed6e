// `hookledger redrive` and `hookledger dlq` as an operator runs them: the real
// CLI in a child process against a real Postgres.
import { spawn } from "node:child_process";
import { runCli } from "../helpers/cli-run";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { seedDeadLetters, seedSubscription } from "../helpers/redrive-helpers";
import { createSub, startReceiver, waitFor, worker } from "../helpers/worker-helpers";
import { cancelRedriveBatch } from "../../lib/redrive/redrive-batches";
import { SYSTEM } from "../../lib/auth/principal";

let db: TestDb;

beforeAll(async () => {
  db = await createTestDatabase();
  await seedSubscription(db, "sub_lincoln");
  await seedSubscription(db, "sub_jefferson");
  await seedDeadLetters(db, { subscriptionId: "sub_lincoln", n: 30, prefix: "evt_l422_", statusCode: 422, reason: "permanent" });
  await seedDeadLetters(db, {
    subscriptionId: "sub_lincoln",
    n: 4,
    prefix: "evt_l503_",
    statusCode: 503,
    errorClass: "http_5xx",
    reason: "exhausted",
    at: new Date(Date.now() - 2 * 86400_000),
  });
  await seedDeadLetters(db, { subscriptionId: "sub_jefferson", n: 2, prefix: "evt_j_", statusCode: 410, errorClass: "http_4xx", reason: "gone" });
});
afterAll(async () => db?.close());

const cli = (...args: string[]) => runCli(args, { DATABASE_URL: db.url });

describe("hookledger dlq", () => {
  it("prints depth, oldest age and a table by subscription and reason", async () => {
    const r = await cli("dlq");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/DLQ depth: 36\s+oldest: 2d 0h/);
    expect(r.stdout).toMatch(/SUBSCRIPTION\s+NAME\s+STATE\s+REASON\s+DEPTH\s+OLDEST/);
    expect(r.stdout).toMatch(/sub_lincoln\s+sub_lincoln SIS\s+active\s+permanent\s+30\s+1m/);
    expect(r.stdout).toMatch(/sub_jefferson\s+sub_jefferson SIS\s+active\s+gone\s+2/);
    // A DATABASE_URL that is no PostgreSQL URL says so, not what the driver made of it ("getaddrinfo ENOTFOUND base").
    for (const [url, said] of [
      ["notaurl", /DATABASE_URL is not a URL; it should look like postgres:\/\//],
      ["http://db.example/hookledger", /DATABASE_URL starts with http:\/\/; a PostgreSQL URL starts with postgres:\/\//],
    ] as const) {
      const bad = await runCli(["dlq"], { DATABASE_URL: url });
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(said);
    }
    const j = JSON.parse((await cli("dlq", "--json")).stdout);
    expect(j).toMatchObject({ depth: 36 });
    expect(j.groups).toHaveLength(3);
  });
});

describe("hookledger redrive", () => {
  it("--dry-run prints the matched count and a sample and changes nothing", async () => {
    const r = await cli("redrive", "--subscription", "sub_lincoln", "--status", "422", "--dry-run");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Matched 30 dead-lettered deliveries\./);
    expect(r.stdout).toMatch(/… and 20 more/);
    expect(r.stdout).toMatch(/Dry run: nothing changed/);
    expect(await db.prisma.redriveBatch.count()).toBe(0);
  });

  it("refuses without --reason, and bad flags, with a message that says what to do", async () => {
    const r = await cli("redrive", "--subscription", "sub_lincoln");
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--reason is required.*INC-2231/);
    const bad = await cli("redrive", "--since", "last tuesday", "--dry-run");
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--since takes an ISO time/);
    expect((await cli("redrive", "--rate", "0", "--dry-run")).stderr).toMatch(/--rate must be/);
    const typo = await cli("redrive", "--dead-letter-reason", "exhaustd", "--dry-run");
    expect(typo.code).not.toBe(0);
    expect(typo.stderr).toMatch(/--dead-letter-reason.*exhaustd.*exhausted/s);
  });

  it("redrives the matched set, printing the count then progress until done, and that what it moved is still on its way; audited as the CLI user", async () => {
    const r = await cli(
      "redrive",
      "--subscription",
      "sub_lincoln",
      "--dead-letter-reason",
      "exhausted",
      "--since",
      "3d",
      "--reason",
      "INC-2231 district fixed",
      "--rate",
      "50",
    );
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toBe("Matched 4 dead-lettered deliveries.");
    expect(r.stdout).toMatch(/Batch rdb_\w+: 4 at 50\/s/);
    // Done means every item is back in the queue, not sent: no worker sends here, so all four are still queued.
    const id = /Batch (rdb_\w+)/.exec(r.stdout)![1];
    expect(lines[lines.length - 1]).toBe(`Done: 4 still on their way (they are sent as usual; follow them on /redrives/${id})`);
    expect(lines[lines.length - 2]).toMatch(/^done\s+redriven 4\/4, skipped 0, remaining 0/);
    expect(
      Number(
        (await db.pool.query("SELECT count(*) FROM deliveries WHERE subscription_id = 'sub_lincoln' AND state = 'pending' AND next_trigger = 'redrive'")).rows[0].count,
      ),
    ).toBe(4);
    const audit = await db.prisma.auditEntry.findFirstOrThrow({ where: { action: "redrive.create" } });
    expect(audit.actor).toMatch(/^cli:/);
    expect(audit.reason).toBe("INC-2231 district fixed");
    expect(audit.details).toMatchObject({ count: 4, filter: { subscriptionId: "sub_lincoln", deadLetterReason: "exhausted" } });
  });

  it("Ctrl-C while following stops following, says the batch goes on, and leaves it running", async () => {
    // As a terminal sends it: SIGINT to the CLI's whole process group, once a progress line is out.
    const child = spawn(
      process.execPath,
      ["bin/hookledger.mjs", "redrive", "--subscription", "sub_lincoln", "--status", "422", "--reason", "INC-2232 slow one", "--rate", "1"],
      { env: { ...process.env, LOG_LEVEL: "warn", DATABASE_URL: db.url }, detached: true },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    const until = Date.now() + 30_000;
    while (!/^running\s/m.test(stdout) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(stdout, stderr).toMatch(/^running\s/m);
    process.kill(-child.pid!, "SIGINT");
    expect(await exited).toBe(130);
    expect(stdout).toMatch(/^Stopped following\. Batch rdb_\w+ goes on in the workers; cancel it on \/redrives\/rdb_\w+/m);
    // Nothing but the progress lines: the pacer the CLI runs meanwhile logs only what goes wrong.
    expect(stdout).not.toMatch(/"msg"/);
    const batch = await db.prisma.redriveBatch.findFirstOrThrow({ where: { reason: "INC-2232 slow one" } });
    expect(batch.status).toBe("running");
    await db.pool.query("UPDATE redrive_batches SET status = 'cancelled', finished_at = now() WHERE id = $1", [batch.id]);
  });

  it("a paused subscription is refused with what to do", async () => {
    await db.pool.query("UPDATE subscriptions SET state = 'paused' WHERE id = 'sub_jefferson'");
    const r = await cli("redrive", "--subscription", "sub_jefferson", "--reason", "INC-1");
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/paused.*Resume it first/);
  });
});

describe("hookledger redrive, cancelled while the endpoint holds what it moved", () => {
  it("ends with the batch page's words: Cancelled, and how many of its deliveries are still on their way", async () => {
    // The endpoint takes what the batch moves and answers nothing until the test lets it.
    let answer = () => {};
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const receiver = await startReceiver(async (_req, res) => {
      await answered;
      res.statusCode = 204;
      res.end();
    });
    await createSub(db.pool, { id: "sub_held", url: receiver.url });
    await seedDeadLetters(db, { subscriptionId: "sub_held", n: 5, prefix: "evt_held_" });
    const w = worker(db.url);
    try {
      // At 1 a second the CLI's pacer moves one item at a time; the worker sends it and the endpoint holds it.
      const run = cli("redrive", "--subscription", "sub_held", "--reason", "INC-2233 held", "--rate", "1");
      await waitFor(async () => receiver.received.length > 0, 30_000, "the endpoint to hold a moved delivery");
      const { id } = await db.prisma.redriveBatch.findFirstOrThrow({ where: { reason: "INC-2233 held" } });
      await cancelRedriveBatch(db.prisma, { id, principal: SYSTEM, reason: "INC-2233 wrong filter" });
      const r = await run;
      expect(r.code, r.stderr + r.stdout).toBe(1);
      // Everything it moved is held (being sent) or queued behind it: none was answered.
      const { redriven } = await db.prisma.redriveBatch.findUniqueOrThrow({ where: { id } });
      expect(redriven).toBeGreaterThan(0);
      const lines = r.stdout.trim().split("\n");
      expect(lines[lines.length - 1]).toBe(`Cancelled: ${redriven} still on their way (they are sent as usual; follow them on /redrives/${id})`);
      expect(lines[lines.length - 2]).toMatch(new RegExp(`^cancelled\\s+redriven ${redriven}/5`));
    } finally {
      answer();
      await w.stop();
      await receiver.close();
    }
  });
});

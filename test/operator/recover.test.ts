// Recover a window end to end with the real worker (runWorker: the delivery
// loop and, beside it, the batch pacer) and a real node:http receiver: every
// delivery of the subscription created in the window, in the batch's states,
// reaches the receiver once more with the same webhook-id, the same bytes and
// a valid fresh signature; deliveries outside the window or in other states
// are left alone; a worker restart mid-batch neither loses nor repeats one.
// Plus the refusals (nothing written) and the Redrives list's kind filter.
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, tableCounts, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { FAST, attemptsOf, createSub, seedEvents, startReceiver, waitFor, type Receiver } from "../helpers/worker-helpers";
import { runWorker } from "../../worker/main";
import * as recover from "../../app/api/v1/subscriptions/[id]/recover/route";
import * as redrives from "../../app/api/v1/redrives/route";
import * as batch from "../../app/api/v1/redrives/[id]/route";
import * as cancel from "../../app/api/v1/redrives/[id]/cancel/route";
import { getDeliveryDetail } from "../../lib/dashboard/delivery";

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

async function allDelivered(prefix: string, n: number) {
  await waitFor(
    async () => {
      const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE event_id LIKE $1 AND state = 'delivered'", [`${prefix}%`]);
      return rows[0].n === n;
    },
    30_000,
    `${n} ${prefix} delivered`,
  );
}

beforeAll(async () => {
  db = await createTestDatabase();
  engineer = await tokenFor(db.prisma, "engineer");
  support = await tokenFor(db.prisma, "support");
  receiver = await startReceiver();
  ({
    secrets: [secret],
  } = await createSub(db.pool, { id: "sub_lincoln", url: receiver.url, maxConcurrency: 20 }));
});
afterAll(async () => {
  await receiver?.close();
  await db?.close();
});

describe("recover a window", () => {
  it("re-sends each delivery of the window once per batch (delivered, resolved and dead-lettered), with the same webhook-id and a valid signature, across a worker restart; outside the window nothing", async () => {
    let w = startWorkerProcess();
    const since = new Date(Date.now() - 1000).toISOString();
    await seedEvents(db.pool, "evt_win_", 60, ["sub_lincoln"]);
    await allDelivered("evt_win_", 60);
    await sleep(50);
    const until = new Date().toISOString();
    await sleep(50);
    await seedEvents(db.pool, "evt_after_", 5, ["sub_lincoln"]);
    await allDelivered("evt_after_", 5);
    // Fixtures: five of the window's rows dead-lettered, three resolved, as if their attempts had failed.
    await db.pool.query(
      `UPDATE deliveries SET state = 'dead_letter', delivered_at = NULL, dead_letter_reason = 'permanent', dead_lettered_at = now(), last_status_code = 422
        WHERE event_id IN ('evt_win_1', 'evt_win_2', 'evt_win_3', 'evt_win_4', 'evt_win_5')`,
    );
    await db.pool.query(
      `UPDATE deliveries SET state = 'resolved', delivered_at = NULL, dead_letter_reason = 'permanent', dead_lettered_at = now(),
              resolution = 'discarded', resolved_at = now(), resolved_by = 'user:a@example.test', resolution_reason = 'test'
        WHERE event_id IN ('evt_win_6', 'evt_win_7', 'evt_win_8')`,
    );

    // An expunged event's delivery is not sent again: its bytes are gone.
    await db.pool.query("UPDATE events SET tombstone = 'expunged', tombstoned_at = now() WHERE id = 'evt_win_60'");
    // A dry run: the exact count by state, only the window, nothing written.
    const before = await tableCounts(db.pool);
    const dry = await call(recover.POST, { token: engineer, params: { id: "sub_lincoln" }, body: { since, until, reason: "INC-88 lost Tuesday", dryRun: true } });
    expect(dry.status, dry.text).toBe(200);
    expect(dry.json).toMatchObject({ id: null, status: "preview", matched: 59, byState: { delivered: 51, dead_letter: 5, resolved: 3 } });
    const onlyDead = await call(recover.POST, {
      token: engineer,
      params: { id: "sub_lincoln" },
      // A preview needs no reason: it changes nothing.
      body: { since, until, states: ["dead_letter"], dryRun: true },
    });
    expect(onlyDead.status, onlyDead.text).toBe(200);
    expect(onlyDead.json.matched).toBe(5);
    expect(await tableCounts(db.pool)).toEqual(before);

    const r = await call(recover.POST, { token: engineer, params: { id: "sub_lincoln" }, body: { since, until, reason: "INC-88 lost Tuesday", ratePerSecond: 40 } });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject({ kind: "recover", status: "running", matched: 59, filter: { subscriptionId: "sub_lincoln", since, until } });
    // Stop the worker once the pacer has moved some (a fixed sleep raced a slow worker start on a loaded machine).
    await waitFor(async () => ((await progress(r.json.id)).redriven > 0 ? true : null), 30_000, "the pacer to move the first rows");
    await w.stop(); // SIGTERM mid-batch
    const mid = await progress(r.json.id);
    expect(mid.status).toBe("running");
    expect(mid.redriven).toBeGreaterThan(0);
    expect(mid.redriven).toBeLessThan(59);
    w = startWorkerProcess(); // a new worker (and pacer) takes the batch over
    try {
      const p = await waitFor(
        async () => {
          const x = await progress(r.json.id);
          return x.status === "done" && x.deliveredSince === 59 ? x : null;
        },
        30_000,
        "the recover to finish and deliver",
      );
      expect(p).toMatchObject({ kind: "recover", matched: 59, redriven: 59, skipped: 0, failedAgain: 0, inProgress: 0 });
    } finally {
      await w.stop();
    }

    const { rows } = await db.pool.query("SELECT id, event_id, delivery_key, state FROM deliveries WHERE subscription_id = 'sub_lincoln' ORDER BY event_id");
    for (const d of rows) {
      expect(d.state).toBe("delivered");
      // In the window: the first send and exactly one more (fixture rows were never sent: once). After it: untouched.
      const expected = d.event_id.startsWith("evt_after_") || d.event_id === "evt_win_60" ? 1 : 2;
      expect(receiver.count(d.delivery_key), d.event_id).toBe(expected);
    }
    const key = rows.find((d) => d.event_id === "evt_win_30")!;
    const got = receiver.received.filter((x) => x.id === key.delivery_key);
    expect(got[1].headers["idempotency-key"]).toBe(key.delivery_key);
    expect(got[1].body.equals(got[0].body)).toBe(true); // the same stored bytes
    expect(() =>
      new Webhook(secret).verify(got[1].body, {
        "webhook-id": String(got[1].headers["webhook-id"]),
        "webhook-timestamp": String(got[1].headers["webhook-timestamp"]),
        "webhook-signature": String(got[1].headers["webhook-signature"]),
      }),
    ).not.toThrow();

    // The timeline: the attempt is a resend (a dead letter: a redrive) by the operator, with the batch's reason in its history.
    const resent = await attemptsOf(db.pool, key.id);
    expect(resent.map((a) => [a.trigger, a.actor, a.outcome])).toEqual([
      ["scheduled", null, "delivered"],
      ["resend", "token:test-engineer", "delivered"],
    ]);
    const detail = await getDeliveryDetail({ id: key.id }, db.pool);
    expect(detail.history.map((h) => [h.action, h.actor, h.reason, (h.details as { batchId?: string }).batchId])).toEqual([
      ["delivery.resend", "token:test-engineer", "INC-88 lost Tuesday", r.json.id],
    ]);
    const dead = rows.find((d) => d.event_id === "evt_win_1")!;
    expect((await attemptsOf(db.pool, dead.id)).map((a) => a.trigger)).toEqual(["scheduled", "redrive"]);

    const audit = await db.pool.query("SELECT action, reason, details FROM audit_entries WHERE target_id = $1", [r.json.id]);
    expect(audit.rows).toEqual([
      {
        action: "recover.create",
        reason: "INC-88 lost Tuesday",
        details: { subscriptionId: "sub_lincoln", since, until, states: ["delivered", "resolved", "dead_letter"], count: 59, ratePerSecond: 40 },
      },
    ]);
  });

  it("skips a row already on its way (pending) rather than sending it twice, and a cancel stops the batch where it is", async () => {
    const since = new Date(Date.now() - 200).toISOString();
    await seedEvents(db.pool, "evt_c_", 30, ["sub_lincoln"]); // no worker running: they stay pending
    await db.pool.query("UPDATE deliveries SET state = 'delivered', delivered_at = now() WHERE event_id LIKE 'evt_c_%' AND event_id <> 'evt_c_1'");
    const r = await call(recover.POST, {
      token: engineer,
      params: { id: "sub_lincoln" },
      body: { since, reason: "INC-90", ratePerSecond: 10, states: ["delivered", "dead_letter"] },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json.matched).toBe(29); // evt_c_1 is pending: not in the snapshot
    // The batch's first item is meanwhile on its way again (e.g. a single resend).
    await db.pool.query(
      "UPDATE deliveries SET state = 'pending', delivered_at = NULL WHERE id = (SELECT delivery_id FROM redrive_batch_items WHERE batch_id = $1 AND seq = 1)",
      [r.json.id],
    );
    // The pacer, by hand: one step moves what the elapsed time allows (at 10/s, a few).
    const { startRedrivePacer } = await import("../../worker/redrive-pacer");
    const pacer = startRedrivePacer({ pool: db.pool, intervalMs: 60_000 });
    try {
      await sleep(500);
      await pacer.tick();
      const c = await call(cancel.POST, { token: engineer, params: { id: r.json.id }, body: { reason: "enough" } });
      expect(c.status, c.text).toBe(200);
      const p = await progress(r.json.id);
      expect(p.status).toBe("cancelled");
      expect(p.redriven + p.skipped).toBeLessThan(29);
      expect(p.remaining).toBeGreaterThan(0);
      expect(p.skipped).toBe(1);
      expect(p.skippedByOutcome).toEqual({ skipped_in_progress: 1 });
      expect(p.redriven).toBeGreaterThan(0);
      await pacer.tick(); // a cancelled batch is never stepped again
      expect((await progress(r.json.id)).redriven).toBe(p.redriven);
    } finally {
      await pacer.stop();
    }
  });
});

describe("recover refusals write nothing", () => {
  it("404 unknown subscription, 400 for a bad window, reason or rate, 409 paused/disabled/archived, 403 support", async () => {
    await createSub(db.pool, { id: "sub_paused", url: receiver.url, state: "paused" });
    await createSub(db.pool, { id: "sub_disabled", url: receiver.url, state: "disabled" });
    await createSub(db.pool, { id: "sub_archived", url: receiver.url });
    await db.pool.query("UPDATE subscriptions SET archived_at = now(), archive_reason = 'left', archived_by = 'user:a@example.test' WHERE id = 'sub_archived'");
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    const ok = { since: hourAgo, reason: "INC-91 lost grades" };
    const before = await tableCounts(db.pool);
    const batches = (await db.pool.query("SELECT count(*)::int AS n FROM redrive_batches")).rows[0].n;
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const cases: [string, Record<string, unknown>, number, string][] = [
      ["sub_nope", ok, 404, "does not exist"],
      ["sub_lincoln", { ...ok, until: new Date(Date.now() - 7_200_000).toISOString() }, 400, "since must be before until"],
      ["sub_lincoln", { ...ok, since: future }, 400, "future"],
      ["sub_lincoln", { ...ok, until: future }, 400, "future"],
      ["sub_lincoln", { ...ok, since: new Date(Date.now() - 401 * 86_400_000).toISOString() }, 400, "400 days"],
      ["sub_lincoln", { ...ok, since: "yesterday" }, 400, "ISO 8601"],
      ["sub_lincoln", { since: hourAgo }, 400, "reason"],
      ["sub_lincoln", { ...ok, reason: "  " }, 400, "reason"],
      ["sub_lincoln", { ...ok, ratePerSecond: 0 }, 400, "ratePerSecond"],
      ["sub_lincoln", { ...ok, ratePerSecond: 5001 }, 400, "ratePerSecond"],
      ["sub_lincoln", { ...ok, states: ["pending"] }, 400, "states"],
      ["sub_paused", ok, 409, "paused"],
      ["sub_disabled", ok, 409, "disabled"],
      ["sub_archived", ok, 409, "archived"],
    ];
    for (const [id, body, status, text] of cases) {
      const r = await call(recover.POST, { token: engineer, params: { id }, body });
      expect(r.status, `${id} ${JSON.stringify(body)}: ${r.text}`).toBe(status);
      expect(r.text).toContain(text);
    }
    expect((await call(recover.POST, { token: support, params: { id: "sub_lincoln" }, body: ok })).status).toBe(403);
    // A window with nothing in it: 409, nothing to recover.
    const empty = await call(recover.POST, {
      token: engineer,
      params: { id: "sub_lincoln" },
      body: { ...ok, since: new Date(Date.now() - 10 * 86_400_000).toISOString(), until: new Date(Date.now() - 9 * 86_400_000).toISOString() },
    });
    expect(empty.status, empty.text).toBe(409);
    expect(await tableCounts(db.pool)).toEqual(before);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM redrive_batches")).rows[0].n).toBe(batches);
  });
});

describe("the Redrives list", () => {
  it("filters by kind", async () => {
    const rec = await call(redrives.GET, { token: support, path: "/api/v1/redrives?kind=recover" });
    expect(rec.status, rec.text).toBe(200);
    expect(rec.json.items.length).toBeGreaterThan(0);
    expect(rec.json.items.every((b: { kind: string }) => b.kind === "recover")).toBe(true);
    const red = await call(redrives.GET, { token: support, path: "/api/v1/redrives?kind=redrive" });
    expect(red.json.items).toEqual([]);
    expect((await call(redrives.GET, { token: support, path: "/api/v1/redrives?kind=nope" })).status).toBe(400);
  });
});

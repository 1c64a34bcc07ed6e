// Group commit on the ingest path (lib/events/ingest.ts): concurrent publishes
// share one statement, and still each get their own answer, only after their
// rows are committed; a failing group loses nobody's event and half-writes none;
// a bad event fails only itself. And the producer-token lookup cache.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTestDatabase, tableCounts, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import * as events from "../../app/api/v1/events/route";
import { GroupPublisher, Waker, ingestEvent } from "../../lib/events/ingest";
import { deliveryKey } from "../../lib/ledger/delivery-key";
import { DELIVERIES_CHANNEL } from "../../lib/ledger/notify";
import { createTokenAsAdmin, revokeToken } from "../../lib/auth/admin";
import { TOKEN_CACHE_TTL_MS, clearTokenCache } from "../../lib/auth/tokens";
import { SYSTEM } from "../../lib/auth/principal";
import type { TCreateEvent } from "../../lib/events/event-input";

let db: TestDb;
let producer: string;

beforeAll(async () => {
  db = await createTestDatabase();
  producer = await tokenFor(db.prisma, "producer");
  for (const [id, tenant] of [
    ["sub_lincoln", "lincoln"],
    ["sub_jefferson", "jefferson"],
    ["sub_all", null],
  ] as const)
    await db.pool.query("INSERT INTO subscriptions (id, name, tenant, url, event_types) VALUES ($1, $1, $2, 'https://x.example.test/h', $3)", [
      id,
      tenant,
      tenant ? ["assignment.graded"] : ["*"],
    ]);
});
afterAll(async () => db?.close());

const graded = (id: string, tenant = "lincoln"): TCreateEvent => ({
  id,
  type: "assignment.graded",
  data: { studentId: "stu_1", score: 90 },
  subject: { tenant, studentId: "stu_1" },
});

async function deliveriesOf(eventId: string) {
  const { rows } = await db.pool.query(
    'SELECT id, subscription_id AS "subscriptionId", delivery_key AS "deliveryKey" FROM deliveries WHERE event_id = $1 ORDER BY subscription_id',
    [eventId],
  );
  return rows;
}

describe("group commit", () => {
  it("100 concurrent publishes: each answered 202 with exactly its own deliveries, all committed", async () => {
    const rs = await Promise.all(
      Array.from({ length: 100 }, (_, i) => call(events.POST, { token: producer, body: graded(`evt_g_${i}`, i % 2 ? "lincoln" : "jefferson") })),
    );
    for (const [i, r] of rs.entries()) {
      expect(r.status, r.text).toBe(202);
      expect(r.json.eventId).toBe(`evt_g_${i}`);
      expect(r.json.deliveries.map((d: { subscriptionId: string }) => d.subscriptionId)).toEqual(i % 2 ? ["sub_all", "sub_lincoln"] : ["sub_all", "sub_jefferson"]);
      for (const d of r.json.deliveries) expect(d.deliveryKey).toBe(deliveryKey(d.subscriptionId, `evt_g_${i}`));
      expect(r.json.deliveries).toEqual(await deliveriesOf(`evt_g_${i}`));
    }
    const stored = await db.pool.query("SELECT payload, subject_values FROM events WHERE id = 'evt_g_1'");
    expect(JSON.parse(stored.rows[0].payload.toString("utf8"))).toMatchObject({ id: "evt_g_1", type: "assignment.graded", data: { score: 90 } });
    expect(stored.rows[0].subject_values).toEqual(["lincoln", "tenant:lincoln", "stu_1", "studentId:stu_1"]);
  });

  it("publishes of one event in the same group: one writes, the others answer as republishes; another type is a 409", async () => {
    const same = await Promise.all([
      ...Array.from({ length: 5 }, () => ingestEvent(graded("evt_same"))),
      ingestEvent({ ...graded("evt_same"), type: "assignment.deleted" }).catch((e) => e),
    ]);
    const ok = same.slice(0, 5) as Awaited<ReturnType<typeof ingestEvent>>[];
    expect(ok.filter((r) => r.created)).toHaveLength(1);
    for (const r of ok) expect(r.deliveries).toEqual(await deliveriesOf("evt_same"));
    expect(same[5]).toMatchObject({ code: "event_conflict" });
    expect(await deliveriesOf("evt_same")).toHaveLength(2);
  });

  it("a republish in a later group answers 200 with the same deliveries; another type is a 409 and writes nothing", async () => {
    const before = await tableCounts(db.pool);
    const again = await call(events.POST, { token: producer, body: graded("evt_g_3") });
    expect(again.status).toBe(200);
    expect(again.json.deliveries).toEqual(await deliveriesOf("evt_g_3"));
    const other = await call(events.POST, { token: producer, body: { ...graded("evt_g_3"), type: "assignment.deleted" } });
    expect(other.status).toBe(409);
    expect(await tableCounts(db.pool)).toEqual(before);
  });

  it("one event the database refuses fails only its own caller; the rest of its group is written", async () => {
    const before = await tableCounts(db.pool);
    // Past validation (ingestEvent trusts its caller), so the group's statement itself fails.
    const bad = { ...graded("evt_bad_row"), subject: { tenant: "lin\u0000coln" } };
    const rs = await Promise.allSettled([ingestEvent(graded("evt_ok_1")), ingestEvent(bad), ingestEvent(graded("evt_ok_2"))]);
    expect(rs.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((rs[1] as PromiseRejectedResult).reason).toMatchObject({ code: "validation_failed" });
    expect(await deliveriesOf("evt_ok_1")).toHaveLength(2);
    expect(await deliveriesOf("evt_ok_2")).toHaveLength(2);
    expect((await db.pool.query("SELECT 1 FROM events WHERE id = 'evt_bad_row'")).rowCount).toBe(0);
    const after = await tableCounts(db.pool);
    expect(after.events - before.events).toBe(2);
    expect(after.deliveries - before.deliveries).toBe(4);
  });

  it("a group whose database is unreachable fails every caller and writes nothing", async () => {
    const before = await tableCounts(db.pool);
    const dead = new pg.Pool({ connectionString: "postgres://nobody@127.0.0.1:1/none", connectionTimeoutMillis: 2000 });
    dead.on("error", () => {});
    const pub = new GroupPublisher(() => dead);
    const rs = await Promise.allSettled([pub.publish(graded("evt_dead_1")), pub.publish(graded("evt_dead_2"))]);
    expect(rs.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    await dead.end();
    expect(await tableCounts(db.pool)).toEqual(before);
  });

  it("runs a fourth statement only for small groups: four single publishes at once, but three full groups of batches", async () => {
    // A pool whose statements never finish: how many statements the publisher has in flight at once.
    const holdingPool = (held: number[]) => ({ query: (q: { values: unknown[][] }) => (held.push(q.values[0].length), new Promise(() => {})) }) as unknown as pg.Pool;
    const tick = () => new Promise((r) => setImmediate(r));
    const small: number[] = [];
    const pub = new GroupPublisher(() => holdingPool(small));
    for (const i of [1, 2, 3, 4, 5]) {
      void pub.publish(graded(`evt_small_${i}`));
      await tick();
    }
    await tick();
    expect(small).toEqual([1, 1, 1, 1]);

    const full: number[] = [];
    const big = new GroupPublisher(() => holdingPool(full));
    for (let i = 0; i < 900; i++) void big.publish(graded(`evt_big_${i}`));
    await tick();
    await tick();
    // 256 + 256 + 256 in flight; the remaining 132 (more than a small group) wait for one of them.
    expect(full).toEqual([256, 256, 256]);
  });

  it("a subject value PostgreSQL cannot store is a 400 through the API, and nothing is written", async () => {
    const before = await tableCounts(db.pool);
    for (const v of ["a\u0000b", "x\ud800y", "\udc00"]) {
      const r = await call(events.POST, { token: producer, body: { ...graded("evt_unstorable"), subject: { tenant: "lincoln", studentId: v } } });
      expect(r.status, r.text).toBe(400);
      expect(r.json.error.details[0].path).toBe("body.subject.studentId");
    }
    expect(await tableCounts(db.pool)).toEqual(before);
  });

  it("a group NOTIFYs the workers once, after its commit", async () => {
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    const seen: number[] = [];
    listener.on("notification", (n) => {
      if (n.channel === DELIVERIES_CHANNEL) seen.push(Date.now());
    });
    await listener.query(`LISTEN ${DELIVERIES_CHANNEL}`);
    const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => ingestEvent(graded(`evt_n_${i}`))));
    expect(rs.every((r) => r.created)).toBe(true);
    await new Promise((r) => setTimeout(r, 200));
    await listener.end();
    expect(seen).toHaveLength(1);
  });

  it("the group's statement itself does not NOTIFY (its commit would hold the notify lock through its flush): the wake is a statement of its own, after the commit", async () => {
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    const seen: string[] = [];
    listener.on("notification", (n) => n.channel === DELIVERIES_CHANNEL && seen.push(n.channel));
    await listener.query(`LISTEN ${DELIVERIES_CHANNEL}`);
    const call = (id: string, wake?: boolean) =>
      db.pool.query(
        `SELECT count(*)::int AS n FROM hl_enqueue_events(ARRAY[$1], ARRAY['assignment.graded'], ARRAY['\\x7b7d'::bytea], ARRAY[now()], ARRAY['lincoln'],
                  ARRAY['{}'::jsonb], ARRAY[]::text[], ARRAY[1], ARRAY[0]${wake === undefined ? "" : ", NULL, NULL, $2"})`,
        wake === undefined ? [id] : [id, wake],
      );
    expect((await call("evt_w_quiet", false)).rows[0].n).toBe(2);
    await new Promise((r) => setTimeout(r, 150));
    expect(seen).toEqual([]);
    // Every other caller keeps the statement's own NOTIFY (the default).
    await call("evt_w_loud");
    await new Promise((r) => setTimeout(r, 150));
    expect(seen).toHaveLength(1);
    await listener.end();
  });

  it("groups that commit while a wake is in flight get exactly one more wake, sent after it: a wake always follows the last commit", async () => {
    const sends: (() => void)[] = [];
    const waker = new Waker(() => new Promise<void>((resolve) => sends.push(resolve)));
    waker.wake();
    expect(sends).toHaveLength(1);
    // Three groups commit while the first wake is in flight: one more wake, once it is done.
    waker.wake();
    waker.wake();
    waker.wake();
    expect(sends).toHaveLength(1);
    sends[0]();
    await new Promise((r) => setImmediate(r));
    expect(sends).toHaveLength(2);
    sends[1]();
    await new Promise((r) => setImmediate(r));
    expect(sends).toHaveLength(2);
    // Idle again: the next commit's wake goes out at once. A failed wake is logged and does not stop the next.
    const failing = new Waker(() => Promise.reject(new Error("connection lost")));
    failing.wake();
    await new Promise((r) => setImmediate(r));
    waker.wake();
    expect(sends).toHaveLength(3);
  });

  it("a grouped publish wakes the workers after its commit: the notification finds the deliveries", async () => {
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    const observed: Promise<number>[] = [];
    listener.on("notification", (n) => {
      if (n.channel === DELIVERIES_CHANNEL)
        observed.push(db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE event_id LIKE 'evt_wv_%'").then((r) => r.rows[0].n as number));
    });
    await listener.query(`LISTEN ${DELIVERIES_CHANNEL}`);
    const publisher = new GroupPublisher(() => db.pool);
    await Promise.all(Array.from({ length: 30 }, (_, i) => publisher.publish(graded(`evt_wv_${i}`))));
    await new Promise((r) => setTimeout(r, 200));
    await listener.end();
    expect(await Promise.all(observed)).toEqual([60]);
  });
});

describe("producer token cache", () => {
  it("a revoked producer token stops working within TOKEN_CACHE_TTL_MS; other roles at once", async () => {
    const t = await createTokenAsAdmin(db.prisma, { role: "producer", name: "revoked-producer" }, SYSTEM);
    expect((await call(events.POST, { token: t.token, body: graded("evt_tok_1") })).status).toBe(202);
    await revokeToken(db.prisma, t.id, SYSTEM);
    const now = Date.now();
    const spy = vi.spyOn(Date, "now").mockReturnValue(now + TOKEN_CACHE_TTL_MS + 1);
    try {
      const r = await call(events.POST, { token: t.token, body: graded("evt_tok_2") });
      expect(r.status).toBe(401);
    } finally {
      spy.mockRestore();
    }
    expect((await db.pool.query("SELECT 1 FROM events WHERE id = 'evt_tok_2'")).rowCount).toBe(0);

    const admin = await createTokenAsAdmin(db.prisma, { role: "admin", name: "revoked-admin" }, SYSTEM);
    expect((await call(events.POST, { token: admin.token, body: graded("evt_tok_3") })).status).toBe(202);
    await revokeToken(db.prisma, admin.id, SYSTEM);
    expect((await call(events.POST, { token: admin.token, body: graded("evt_tok_4") })).status).toBe(401);
    clearTokenCache();
  });
});

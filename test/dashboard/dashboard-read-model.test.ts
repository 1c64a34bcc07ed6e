// One read model: the public API, the dashboard and the redrive service read a
// delivery and its attempts through the same lib/ledger finders and mapping,
// on a pg pool or inside a Prisma transaction alike; the SQL's columns, the
// one schema (ZDeliveryRecord) and the API's view (a pick of it) agree;
// redrive filters travel as parameters.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, tableCounts, type TestDb } from "../helpers/db";
import { minutesAgo, seedDelivery, seedEvent, seedSubscription } from "../helpers/dashboard-seed";
import { getDeliveryWithAttempts, listDeliveries, toDeliveryView } from "../../lib/deliveries/queries";
import { getDeliveryDetail } from "../../lib/dashboard/delivery";
import { findLookupResults } from "../../lib/dashboard/lookup";
import { findSubscriptionDeliveries } from "../../lib/dashboard/subscriptions";
import { findDeliveries, withAttempts } from "../../lib/ledger/sql/find-deliveries";
import { getDelivery } from "../../lib/ledger/sql/get-delivery";
import { findStateCounts, hasDeliveries } from "../../lib/ledger/sql/counts";
import { countRedriveMatches, redriveFilterWhere, sampleRedriveMatches } from "../../lib/ledger/sql/redrive";
import { previewRedrive } from "../../lib/redrive/redrive-batches";
import { DELIVERY_COLUMNS } from "../../lib/ledger/read/map";
import { ZDeliveryRecord, ZDeliveryWithAttempts } from "../../lib/ledger/read/types";
import { ZDeliveryView, ZDeliveryWithAttempts as ZApiDeliveryWithAttempts } from "../../lib/api/views";

let db: TestDb;
const ids: Record<string, string> = {};

beforeAll(async () => {
  db = await createTestDatabase();
  const p = db.pool;
  await seedSubscription(p, { id: "sub_a", name: "Alpha USD", tenant: "alpha" });
  await seedSubscription(p, { id: "sub_empty", name: "Nobody", tenant: "nobody" });
  await seedEvent(p, { id: "evt_1", subject: { tenant: "alpha", studentId: "stu_1" } });
  ids.ok = await seedDelivery(p, {
    subscriptionId: "sub_a",
    eventId: "evt_1",
    state: "delivered",
    attempts: [
      { at: minutesAgo(10), status: 503, errorClass: "http_5xx", outcome: "retry", ms: 900, excerpt: "x".repeat(500) },
      { at: minutesAgo(9), status: 200, outcome: "delivered", ms: 120 },
    ],
  });
  await seedEvent(p, { id: "evt_2", subject: { tenant: "alpha", studentId: "stu_2" } });
  ids.dead = await seedDelivery(p, {
    subscriptionId: "sub_a",
    eventId: "evt_2",
    state: "dead_letter",
    reason: "permanent",
    attempts: [{ at: minutesAgo(5), status: 422, errorClass: "http_4xx", outcome: "dead_letter", ms: 80, excerpt: "missing field term_id" }],
  });
});
afterAll(async () => db?.close());

describe("one read model", () => {
  it("the public API's delivery is the dashboard's, field for field, attempts included", async () => {
    const api = await getDeliveryWithAttempts(db.pool, ids.ok);
    const page = await getDeliveryDetail({ id: ids.ok });
    const { attempts, ...apiDelivery } = api;
    for (const [k, v] of Object.entries(apiDelivery)) expect(page[k as keyof typeof page], k).toEqual(v);
    expect(attempts).toEqual(page.attempts);
    expect(attempts.map((a) => a.responseExcerpt?.length ?? 0)).toEqual([500, 0]);
    // The public shape: exactly the documented fields, no dashboard extras.
    expect(Object.keys(apiDelivery).sort()).toEqual(
      [
        "id",
        "deliveryKey",
        "eventId",
        "eventType",
        "subscriptionId",
        "state",
        "attemptCount",
        "totalAttempts",
        "nextAttemptAt",
        "lastAttemptAt",
        "lastStatusCode",
        "lastErrorClass",
        "lastErrorMessage",
        "deadLetterReason",
        "deadLetteredAt",
        "deliveredAt",
        "createdAt",
        "resolution",
      ].sort(),
    );
  });

  it("the lists carry the same delivery and attempts as the detail, answers cut to 200 characters", async () => {
    const detail = await getDeliveryDetail({ id: ids.ok });
    const looked = (await findLookupResults({ q: "stu_1" })).deliveries;
    const timeline = (await findSubscriptionDeliveries({ subscriptionId: "sub_a" })).items.find((d) => d.id === ids.ok)!;
    for (const d of [looked[0], timeline]) {
      expect(d.id).toBe(ids.ok);
      expect(toDeliveryView(d)).toEqual(toDeliveryView(detail));
      expect(d.subscriptionName).toBe("Alpha USD");
      expect(d.attempts.map((a) => ({ ...a, responseExcerpt: null }))).toEqual(detail.attempts.map((a) => ({ ...a, responseExcerpt: null })));
      expect(d.attempts[0].responseExcerpt).toBe("x".repeat(200));
    }
    const api = await listDeliveries(db.pool, { q: "stu_1", limit: 50 });
    expect(api.items).toEqual([toDeliveryView(detail)]);
  });

  it("the finders answer the same on a pg pool and inside an operator's Prisma transaction", async () => {
    const filter = { subscriptionId: "sub_a", limit: 10 };
    const inTx = await db.prisma.$transaction(async (tx) => ({
      page: await findDeliveries(tx, filter),
      dead: await getDelivery(tx, ids.dead),
      ok: await getDeliveryWithAttempts(tx, ids.ok),
      counts: await findStateCounts(tx),
      has: await hasDeliveries(tx, "sub_a"),
    }));
    expect(inTx.page).toEqual(await findDeliveries(db.pool, filter));
    expect(inTx.dead).toEqual(await getDelivery(db.pool, ids.dead));
    expect(inTx.ok).toEqual(await getDeliveryWithAttempts(db.pool, ids.ok));
    expect(inTx.counts).toEqual(await findStateCounts(db.pool));
    expect(inTx.has).toBe(true);
    expect(await findStateCounts(db.pool, { subscriptionIds: ["sub_a"], states: ["dead_letter"] })).toEqual([
      { subscriptionId: "sub_a", state: "dead_letter", reason: "permanent", n: 1 },
    ]);
    expect(await hasDeliveries(db.pool, "sub_empty")).toBe(false);
  });
});

describe("one delivery shape", () => {
  // The record's fields that no single column of the same name carries, and the columns they come from.
  const DERIVED: Record<string, string[]> = {
    maxAttempts: ["retry_policy"],
    resolution: ["resolution", "resolved_at", "resolved_by", "resolution_reason"],
    sending: ["leased_at", "lease_until", "leased_seconds", "retry_policy"],
  };
  const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  const columnNames = () =>
    DELIVERY_COLUMNS.text.split(",").map((c) =>
      c
        .trim()
        .split(/\s+AS\s+|\./)
        .pop()!,
    );

  it("DELIVERY_COLUMNS selects a column for every field of ZDeliveryRecord, and nothing else", () => {
    const wanted = Object.keys(ZDeliveryRecord.shape).flatMap((k) => DERIVED[k] ?? [snake(k)]);
    expect(columnNames().sort()).toEqual([...new Set(wanted)].sort());
  });

  it("a record read from the ledger is ZDeliveryRecord exactly; the API's view is its pick", async () => {
    const [d] = await withAttempts(db.pool, [(await getDelivery(db.pool, ids.dead))!]);
    expect(d.attempts.length).toBeGreaterThan(0);
    expect(ZDeliveryWithAttempts.strict().parse(d)).toEqual(d);
    const view = toDeliveryView(d);
    expect(Object.keys(view)).toEqual(Object.keys(ZDeliveryView.shape));
    expect(ZDeliveryView.strict().parse(view)).toEqual(view);
    for (const k of Object.keys(ZDeliveryView.shape))
      expect(ZDeliveryView.shape[k as keyof typeof ZDeliveryView.shape]).toBe(ZDeliveryRecord.shape[k as keyof typeof ZDeliveryRecord.shape]);
    const api = await getDeliveryWithAttempts(db.pool, ids.dead);
    expect(ZApiDeliveryWithAttempts.strict().parse(api)).toEqual(api);
  });
});

describe("redrive filters are parameters", () => {
  it("no filter value is ever part of the SQL text", () => {
    const f = { subscriptionId: "sub_a", deadLetterReason: "permanent", errorClass: "x' OR '1'='1", statusCode: 422, deadLetteredFrom: "2026-01-01T00:00:00Z" };
    const where = redriveFilterWhere(f);
    for (const v of Object.values(f)) expect(where.text).not.toContain(String(v));
    expect(where.values).toEqual(["sub_a", "permanent", "x' OR '1'='1", 422, "2026-01-01T00:00:00Z"]);
  });

  it("a quote in a filter value matches nothing and changes nothing", async () => {
    const before = await tableCounts(db.pool);
    const hostile = { errorClass: "http_4xx' OR '1'='1" };
    expect((await countRedriveMatches(db.pool, hostile)).matched).toBe(0);
    expect(await sampleRedriveMatches(db.pool, { errorClass: "'; DELETE FROM deliveries; --" }, 10)).toEqual([]);
    const preview = await previewRedrive(db.prisma, { filter: { errorClass: "http_4xx" }, latestStateWins: true });
    expect(preview).toMatchObject({ matched: 1, superseded: 0 });
    expect(preview.sample.map((s) => s.id)).toEqual([ids.dead]);
    expect(await tableCounts(db.pool)).toEqual(before);
  });
});

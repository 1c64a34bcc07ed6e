// The dashboard's server-only query functions against real Postgres, with
// ledger states seeded in SQL (lib/dashboard/*, lib/rollups/sampler.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { minutesAgo, seedDelivery, seedEvent, seedSubscription } from "../helpers/dashboard-seed";
import { findLookupResults } from "../../lib/dashboard/lookup";
import { getDeliveryDetail } from "../../lib/dashboard/delivery";
import { findEndpointAnswers, findSubscriptionDeliveries, findSubscriptionHealth, getSubscriptionOverview } from "../../lib/dashboard/subscriptions";
import { findDlqHistory, getDlqSummary } from "../../lib/dashboard/dead-letters";
import { rollupAttemptStats, runSamplerOnce, sampleDlq } from "../../lib/rollups/sampler";
import { describeDelivery, deliveryReceipt } from "../../lib/dashboard/describe";
import { deliveryKey } from "../../lib/ledger/delivery-key";
import { quantileFromHistogram } from "../../lib/ledger/read/latency";

let db: TestDb;
const ids: Record<string, string> = {};
const utc = (iso: string) => new Date(iso).toISOString().slice(11, 19);

beforeAll(async () => {
  db = await createTestDatabase();
  const p = db.pool;
  await seedSubscription(p, { id: "sub_lincoln", name: "Lincoln USD", tenant: "lincoln" });
  await seedSubscription(p, { id: "sub_jeff", name: "Jefferson SIS", tenant: "jefferson", retryPolicy: { ladderSeconds: [30, 120, 600, 3600, 21600] } });
  await seedSubscription(p, { id: "sub_paused", name: "Roosevelt", tenant: "roosevelt", state: "paused" });

  await seedEvent(p, { id: "evt_ok", subject: { tenant: "lincoln", studentId: "stu_881", assignmentId: "asg_7" } });
  ids.ok = await seedDelivery(p, {
    subscriptionId: "sub_lincoln",
    eventId: "evt_ok",
    state: "delivered",
    attempts: [
      { at: minutesAgo(30), status: 503, errorClass: "http_5xx", outcome: "retry", ms: 900, excerpt: "Service Unavailable" },
      { at: minutesAgo(29), status: 200, outcome: "delivered", ms: 143 },
    ],
  });
  await seedEvent(p, { id: "evt_retry", subject: { tenant: "jefferson", studentId: "stu_900" } });
  ids.retry = await seedDelivery(p, {
    subscriptionId: "sub_jeff",
    eventId: "evt_retry",
    state: "scheduled",
    nextAttemptAt: new Date(Date.now() + 600_000),
    attempts: [
      { at: minutesAgo(20), status: 503, errorClass: "http_5xx", outcome: "retry", ms: 300 },
      { at: minutesAgo(15), status: 503, errorClass: "http_5xx", outcome: "retry", ms: 310 },
    ],
  });
  // Ten 422s with the same answer (ids differ) and one 400: the grouped answers.
  for (let i = 0; i < 10; i++) {
    await seedEvent(p, { id: `evt_dl_${i}`, subject: { tenant: "jefferson", studentId: `stu_${700 + i}` } });
    ids[`dl${i}`] = await seedDelivery(p, {
      subscriptionId: "sub_jeff",
      eventId: `evt_dl_${i}`,
      state: "dead_letter",
      reason: "permanent",
      attempts: [{ at: minutesAgo(50 - i), status: 422, errorClass: "http_4xx", outcome: "dead_letter", ms: 80, excerpt: `missing field term_id (request ${1000 + i})` }],
    });
  }
  await seedEvent(p, { id: "evt_dl_400", subject: { tenant: "jefferson" } });
  await seedDelivery(p, {
    subscriptionId: "sub_jeff",
    eventId: "evt_dl_400",
    state: "dead_letter",
    reason: "permanent",
    attempts: [{ at: minutesAgo(5), status: 400, errorClass: "http_4xx", outcome: "dead_letter", ms: 70, excerpt: "bad json" }],
  });
  await seedEvent(p, { id: "evt_held", subject: { tenant: "roosevelt", studentId: "stu_881" } });
  ids.held = await seedDelivery(p, { subscriptionId: "sub_paused", eventId: "evt_held", state: "pending" });
  await p.query(
    `INSERT INTO audit_entries (actor, action, target_type, target_id, reason) VALUES ('user:eng@example.test', 'delivery.redrive', 'delivery', $1, 'ticket 4411')`,
    [ids.dl0],
  );
});
afterAll(async () => db?.close());

describe("findLookupResults", () => {
  it("a student id finds every delivery of that student's events, with attempts", async () => {
    const r = await findLookupResults({ q: "stu_881" });
    expect(r.deliveries.map((d) => d.eventId).sort()).toEqual(["evt_held", "evt_ok"]);
    const ok = r.deliveries.find((d) => d.id === ids.ok)!;
    expect(ok.attempts.map((a) => a.statusCode)).toEqual([503, 200]);
    expect(ok.subscriptionName).toBe("Lincoln USD");
  });

  it("finds by event id, delivery key, delivery id, key:value, tenant and subscription", async () => {
    expect((await findLookupResults({ q: "evt_retry" })).deliveries.map((d) => d.id)).toEqual([ids.retry]);
    expect((await findLookupResults({ q: deliveryKey("sub_lincoln", "evt_ok") })).deliveries.map((d) => d.id)).toEqual([ids.ok]);
    expect((await findLookupResults({ q: ids.held })).deliveries.map((d) => d.id)).toEqual([ids.held]);
    expect((await findLookupResults({ q: "studentId:stu_900" })).deliveries.map((d) => d.id)).toEqual([ids.retry]);
    const tenant = await findLookupResults({ q: "jefferson" });
    expect(tenant.deliveries).toHaveLength(12);
    expect(tenant.subscriptions.map((s) => s.id)).toEqual(["sub_jeff"]);
    const byName = await findLookupResults({ q: "lincoln usd" });
    expect(byName.subscriptions.map((s) => s.id)).toEqual(["sub_lincoln"]);
    const bySub = await findLookupResults({ q: "sub_paused", limit: 5 });
    expect(bySub.deliveries.map((d) => d.id)).toEqual([ids.held]);
  });

  it("finds a district by its name as support staff type it, not only by its id", async () => {
    await db.pool.query("UPDATE tenants SET name = 'Jefferson County Schools' WHERE id = 'jefferson'");
    try {
      const r = await findLookupResults({ q: "jefferson county schools" });
      expect(r.subscriptions.map((s) => s.id)).toEqual(["sub_jeff"]);
      expect(r.deliveries).toHaveLength(12);
      expect(new Set(r.deliveries.map((d) => d.subscriptionId))).toEqual(new Set(["sub_jeff"]));
      // A district's manager looking up another district's name finds nothing of it.
      const other = await findLookupResults({ q: "Jefferson County Schools" }, undefined, { tenantId: "lincoln", subscriptionId: null });
      expect(other.deliveries).toEqual([]);
      expect(other.subscriptions).toEqual([]);
    } finally {
      await db.pool.query("UPDATE tenants SET name = 'jefferson' WHERE id = 'jefferson'");
    }
  });

  it("answers nothing for an unknown value, and caps the page", async () => {
    const none = await findLookupResults({ q: "nobody_at_all" });
    expect(none.deliveries).toEqual([]);
    expect(none.subscriptions).toEqual([]);
    const capped = await findLookupResults({ q: "jefferson", limit: 5 });
    expect(capped.deliveries).toHaveLength(5);
    expect(capped.truncated).toBe(true);
  });

  it("names 20 matching subscriptions and says when more match", async () => {
    for (let i = 0; i < 25; i++) await seedSubscription(db.pool, { id: `sub_many_${i}`, name: `Manymatch LMS ${String(i).padStart(2, "0")}`, tenant: "manymatch" });
    const many = await findLookupResults({ q: "manymatch lms" });
    expect(many.subscriptions).toHaveLength(20);
    expect(many.subscriptionsTruncated).toBe(true);
    const one = await findLookupResults({ q: "lincoln usd" });
    expect(one.subscriptionsTruncated).toBe(false);
  });

  it("a district whose endpoint takes only some event types: its deliveries behind newer unrouted events are found, and a cut list says so", async () => {
    const p = db.pool;
    await seedSubscription(p, { id: "sub_maple", name: "Maple importer", tenant: "maple" });
    // 10 grades with a delivery, then 40 newer attendance events for which the endpoint has none.
    const maple: string[] = [];
    for (let i = 0; i < 10; i++) {
      await seedEvent(p, { id: `evt_maple_g${i}`, subject: { tenant: "maple", studentId: `stu_m${i}` }, createdAt: minutesAgo(100 - i) });
      maple.unshift(await seedDelivery(p, { subscriptionId: "sub_maple", eventId: `evt_maple_g${i}`, state: "delivered", attempts: [] }));
    }
    for (let i = 0; i < 40; i++) await seedEvent(p, { id: `evt_maple_a${i}`, type: "attendance.recorded", subject: { tenant: "maple" }, createdAt: minutesAgo(50 - i) });
    const all = await findLookupResults({ q: "maple" });
    expect(all.deliveries.map((d) => d.id)).toEqual(maple);
    expect(all.truncated).toBe(false);
    // A page of 5 reads 24 events, all attendance: nothing to show from them, but more may match, and it says so.
    const cut = await findLookupResults({ q: "maple", limit: 5 });
    expect(cut.deliveries).toEqual([]);
    expect(cut.truncated).toBe(true);
  });

  it("a LIKE wildcard in the query is taken literally", async () => {
    expect((await findLookupResults({ q: "%" })).subscriptions).toEqual([]);
  });
});

describe("plain words and the receipt", () => {
  it("describes each state the way support staff say it", async () => {
    const r = await findLookupResults({ q: "stu_881" });
    const ok = r.deliveries.find((d) => d.id === ids.ok)!;
    expect(describeDelivery(ok, utc).text).toMatch(/^Delivered \d\d:\d\d:\d\d to Lincoln USD, HTTP 200 in 143 ms$/);
    const held = r.deliveries.find((d) => d.id === ids.held)!;
    expect(describeDelivery(held, utc)).toMatchObject({ tone: "held", text: expect.stringContaining("Roosevelt is paused") });
    const retry = (await findLookupResults({ q: "evt_retry" })).deliveries[0];
    expect(describeDelivery(retry, utc).text).toMatch(/^Retrying: attempt 3 of 6, next at \d\d:\d\d:\d\d, last answer HTTP 503$/);
    // An answer that never came is said in the words of the dashboard's labels, not as the error class's name.
    for (const [errorClass, words] of [
      ["dns", "DNS failure"],
      ["tls", "TLS failure"],
      ["reset", "connection reset"],
      ["connect_refused", "connection refused"],
    ] as const)
      expect(describeDelivery({ ...retry, lastStatusCode: null, lastErrorClass: errorClass }, utc).text).toMatch(new RegExp(`, last answer ${words}$`));
    const dl = (await findLookupResults({ q: "evt_dl_0" })).deliveries[0];
    expect(describeDelivery(dl, utc).text).toMatch(
      /^Not delivered: Jefferson SIS answered HTTP 422 “missing field term_id \(request 1000\)” \(permanent\) at \d\d:\d\d:\d\d$/,
    );
    // Who resolved it, in the words the timeline and the Audit page use for that actor (lib/words.ts actorInWords).
    const at = new Date().toISOString();
    for (const [by, words] of [
      ["user:ana@district.example", "by ana@district.example because"],
      ["token:deploy", "by API token “deploy” because"],
      ["portal:lincoln", "by the district portal of lincoln because"],
      ["cli:ops@host", "by the command line (ops@host) because"],
    ] as const)
      expect(describeDelivery({ ...dl, state: "resolved", resolution: { resolution: "discarded", at, by, reason: "SIS replaced" } }, utc).text).toContain(
        `resolved — discarded ${words} SIS replaced`,
      );
  });

  it("the receipt holds identity and every attempt, never the payload", async () => {
    const ok = (await findLookupResults({ q: "evt_ok" })).deliveries[0];
    const text = deliveryReceipt(ok, (s) => s);
    expect(text).toContain(deliveryKey("sub_lincoln", "evt_ok"));
    expect(text).toContain("evt_ok");
    expect(text).toContain("Subscription: sub_lincoln");
    expect(text).toMatch(/- Attempt 1 on .*: answered HTTP 503 “Service Unavailable”, will be retried\./);
    expect(text).toMatch(/- Attempt 2 on .*: answered HTTP 200, accepted\./);
    expect(text).toContain("It was delivered to Lincoln USD on ");
    expect(text).not.toContain("score");
  });
});

describe("getDeliveryDetail", () => {
  it("has attempts, redrive history, redacted headers and the payload", async () => {
    const d = await getDeliveryDetail({ id: ids.dl0 });
    expect(d.attempts).toHaveLength(1);
    expect(d.attempts[0]).toMatchObject({ statusCode: 422, workerId: "w-test", ambiguous: false });
    expect(d.history[0]).toMatchObject({ actor: "user:eng@example.test", action: "delivery.redrive", reason: "ticket 4411" });
    const headers = Object.fromEntries(d.requestHeaders);
    expect(headers["webhook-id"]).toBe(deliveryKey("sub_jeff", "evt_dl_0"));
    expect(headers["webhook-signature"]).toBe("v1,[redacted]");
    expect(JSON.parse(d.payload.pretty!)).toMatchObject({ id: "evt_dl_0", data: { score: 93 } });
    expect(Buffer.from(d.payload.base64, "base64").byteLength).toBe(d.payload.bytes);
  });

  it("an unknown or malformed id is not found", async () => {
    await expect(getDeliveryDetail({ id: "dlv_00000000000000000000000000" })).rejects.toMatchObject({ code: "not_found" });
    await expect(getDeliveryDetail({ id: "'; drop table x" })).rejects.toMatchObject({ code: "not_found" });
  });
});

describe("subscription health from the rollup", () => {
  it("before the sampler runs, queue counts are live and stats are empty", async () => {
    const [jeff] = await findSubscriptionHealth({ ids: ["sub_jeff"] });
    expect(jeff.counts).toMatchObject({ pending: 0, scheduled: 1, inFlight: 0, deadLetter: 11 });
    expect(jeff.h1.attempts).toBe(0);
    expect(jeff.lastError).toMatchObject({ statusCode: 400, message: "bad json" });
    const [paused] = await findSubscriptionHealth({ ids: ["sub_paused"] });
    expect(paused.counts.pending).toBe(1);
    expect(paused.state).toBe("paused");
  });

  it("after a rollup: success rate, p50/p95 and the outcomes series", async () => {
    const folded = await rollupAttemptStats(db.pool, { settleSeconds: 0 });
    expect(folded).toBe(2 + 2 + 10 + 1);
    expect(await rollupAttemptStats(db.pool, { settleSeconds: 0 })).toBe(0); // idempotent: nothing counted twice
    const [lincoln] = await findSubscriptionHealth({ tenant: "lincoln" });
    expect(lincoln.h1).toMatchObject({ attempts: 2, delivered: 1, successRate: 0.5 });
    expect(lincoln.h1.p50Ms).toBeGreaterThan(100);
    expect(lincoln.h1.p95Ms).toBeGreaterThanOrEqual(750);
    expect(lincoln.counts.delivered24h).toBe(1);
    const o = await getSubscriptionOverview({ id: "sub_jeff", range: "1h" });
    expect(o.series.reduce((s, p) => s + p.deadLettered, 0)).toBe(11);
    expect(o.series.reduce((s, p) => s + p.retried, 0)).toBe(2);
    expect(o.series.length).toBeGreaterThanOrEqual(60);
    expect(o.knownEventTypes).toEqual(["assignment.graded"]);
    await expect(getSubscriptionOverview({ id: "sub_nope" })).rejects.toMatchObject({ code: "not_found" });
  });

  it("tenant filter", async () => {
    expect((await findSubscriptionHealth({ tenant: "roosevelt" })).map((s) => s.id)).toEqual(["sub_paused"]);
    expect(await findSubscriptionHealth({ tenant: "nowhere" })).toEqual([]);
  });

  it("percentiles interpolate inside a bucket", () => {
    expect(quantileFromHistogram([], 0.5)).toBeNull();
    expect(quantileFromHistogram([0, 0, 0, 0, 0, 10], 0.5)).toBeGreaterThan(75);
    expect(quantileFromHistogram([0, 0, 0, 0, 0, 10], 0.5)).toBeLessThanOrEqual(100);
  });
});

describe("findSubscriptionDeliveries", () => {
  it("pages newest first with a cursor and filters", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await findSubscriptionDeliveries({ subscriptionId: "sub_jeff", limit: 5, cursor });
      seen.push(...page.items.map((d) => d.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toHaveLength(12);
    expect([...seen].sort().reverse()).toEqual(seen);
    expect((await findSubscriptionDeliveries({ subscriptionId: "sub_jeff", state: "scheduled" })).items.map((d) => d.id)).toEqual([ids.retry]);
    expect((await findSubscriptionDeliveries({ subscriptionId: "sub_jeff", statusCode: 400 })).items).toHaveLength(1);
    expect((await findSubscriptionDeliveries({ subscriptionId: "sub_jeff", errorClass: "http_4xx" })).items).toHaveLength(11);
    expect((await findSubscriptionDeliveries({ subscriptionId: "sub_jeff", eventType: "other.type" })).items).toHaveLength(0);
    const future = new Date(Date.now() + 3600_000).toISOString();
    expect((await findSubscriptionDeliveries({ subscriptionId: "sub_jeff", from: future })).items).toHaveLength(0);
    expect((await findSubscriptionDeliveries({ subscriptionId: "sub_jeff", to: future })).items).toHaveLength(12);
  });

  it("rejects a bad cursor and a backwards range", async () => {
    await expect(findSubscriptionDeliveries({ subscriptionId: "sub_jeff", cursor: "nope" })).rejects.toThrow();
    await expect(
      findSubscriptionDeliveries({ subscriptionId: "sub_jeff", from: new Date().toISOString(), to: new Date(Date.now() - 1000).toISOString() }),
    ).rejects.toMatchObject({ code: "bad_request" });
  });
});

describe("findEndpointAnswers", () => {
  it("groups failures by status and response signature", async () => {
    const r = await findEndpointAnswers({ subscriptionId: "sub_jeff" });
    expect(r.examined).toBe(13);
    expect(r.groups[0]).toMatchObject({ statusCode: 422, count: 10, signature: "missing field term_id (request #)" });
    expect(r.groups.map((g) => `${g.count}×${g.statusCode}`)).toEqual(["10×422", "2×503", "1×400"]);
    // The 503s were retried (nothing of theirs to redrive); the 422s dead-lettered their deliveries.
    expect(r.groups.map((g) => g.deadLettered)).toEqual([10, 0, 1]);
    expect(new Date(r.groups[0].firstAt) < new Date(r.groups[0].lastAt)).toBe(true);
  });
});

describe("the DLQ sampler and summary", () => {
  it("summary is counted from the ledger before and after a sample; the sample agrees with it", async () => {
    const before = await getDlqSummary();
    expect(before).toMatchObject({ depth: 11, groupsSampledAt: null });
    expect(before.oldestAgeSeconds).toBeGreaterThan(49 * 60);
    const s = await sampleDlq(db.pool, { minGapMs: 0 });
    expect(s).toEqual({ sampled: true, depth: 11 });
    const after = await getDlqSummary();
    expect(after.depth).toBe(11);
    expect(after.bySubscription).toEqual([{ subscriptionId: "sub_jeff", subscriptionName: "Jefferson SIS", depth: 11, oldestAgeSeconds: expect.any(Number) }]);
    expect(after.byReason).toEqual([{ reason: "permanent", depth: 11, oldestAgeSeconds: expect.any(Number) }]);
    expect(after.bySubscriptionAndReason).toEqual([{ subscriptionId: "sub_jeff", reason: "permanent", depth: 11, oldestAgeSeconds: expect.any(Number) }]);
    expect(after.groups.map((g) => [g.statusCode, g.depth, g.sampledAt])).toEqual([
      [422, 10, null],
      [400, 1, null],
    ]);
    // Past the live budget the groups are the sample's, marked with its time; the depth is still counted.
    const large = await getDlqSummary({ liveGroupLimit: 5 });
    expect(large).toMatchObject({ depth: 11, groupsSampledAt: expect.any(String) });
    expect(large.groups.map((g) => [g.statusCode, g.depth, g.sampledAt])).toEqual([
      [422, 10, large.groupsSampledAt],
      [400, 1, large.groupsSampledAt],
    ]);
  });

  it("a second sampler within the interval skips (several dashboard instances take one sample)", async () => {
    const [a, b] = await Promise.all([sampleDlq(db.pool, { minGapMs: 60_000 }), sampleDlq(db.pool, { minGapMs: 60_000 })]);
    expect(a.sampled || b.sampled).toBe(false);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM dlq_samples")).rows[0].n).toBe(1);
  });

  it("history charts depth and oldest age over time from the samples", async () => {
    await db.pool.query(`UPDATE deliveries SET state = 'pending', dead_letter_reason = NULL, dead_lettered_at = NULL WHERE id = $1`, [ids.dl9]);
    await sampleDlq(db.pool, { minGapMs: 0, now: new Date(Date.now() + 30_000) });
    const h = await findDlqHistory({ hours: 1, now: new Date(Date.now() + 60_000) });
    expect(h.points.map((p) => p.depth)).toEqual([11, 10]);
    expect(h.points[1].oldestAgeSeconds).toBeGreaterThan(h.points[0].oldestAgeSeconds!);
    await runSamplerOnce(db.pool, { settleSeconds: 0, minGapMs: 0 });
  });

  it("history names the stretches with no sample as gaps, not the 5 min between a worker's own samples", async () => {
    // An hour ahead of the samples above, so only these fall in its window: every 15 s for 2 min (a dashboard), 40
    // min with none (nothing running), then every 5 min (workers alone, whose notifier samples that often).
    const base = Date.now() + 2 * 3600_000;
    const at = (min: number) => new Date(base + min * 60_000);
    const minutes = [0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 42, 47, 52, 57];
    for (const m of minutes) await sampleDlq(db.pool, { minGapMs: 0, now: at(m) });
    const h = await findDlqHistory({ hours: 1, now: at(58) });
    expect(h.bucketSeconds).toBe(15);
    // Each point is its 15 s bucket's start.
    const bucket = (d: Date) => new Date(Math.floor(d.getTime() / 15_000) * 15_000).toISOString();
    expect(h.gaps).toEqual([{ from: bucket(at(2)), to: bucket(at(42)) }]);
    expect(h.points.map((p) => p.at)).toEqual(minutes.map((m) => bucket(at(m))));
    // Over a week, a bucket is 42 min: three of them (126 min) without a sample make a gap, 40 min do not.
    expect((await findDlqHistory({ hours: 168, now: at(58) })).gaps).toEqual([]);
    await db.pool.query("DELETE FROM dlq_samples WHERE sampled_at >= $1", [at(0)]);
  });
});

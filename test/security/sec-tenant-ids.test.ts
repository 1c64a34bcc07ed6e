// Ids say nothing across tenants. A principal confined to Lincoln:
// - publishing an id Jefferson already used (or one an erasure tombstoned) is
//   answered exactly as a conflict on one of Lincoln's own ids: no stored
//   type, no erasure, nothing that tells the two apart;
// - cannot choose a subscription id (ids are shared by every tenant), so it
//   can neither take "sub_jeff" before Jefferson nor learn that it exists;
//   ids are generated for it;
// - is answered with the deliveries of Lincoln's subscriptions only, not of a
//   tenant-less one its event also reached (single, batch and republish).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, tableCounts, type TestDb } from "../helpers/db";
import { call } from "../helpers/api";
import { createApiToken } from "../../lib/auth/tokens";
import { createSubscription } from "../../lib/subscriptions/manage-subscriptions";
import { SYSTEM } from "../../lib/auth/principal";
import * as events from "../../app/api/v1/events/route";
import * as batch from "../../app/api/v1/events/batch/route";
import * as subscriptions from "../../app/api/v1/subscriptions/route";
import * as erasures from "../../app/api/v1/erasures/route";

let db: TestDb;
const tok: Record<string, string> = {};

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query("INSERT INTO tenants (id, name) VALUES ('lincoln', 'Lincoln USD'), ('jefferson', 'Jefferson County')");
  for (const [key, role, tenantId] of [
    ["producer", "producer", null],
    ["admin", "admin", null],
    ["lProducer", "producer", "lincoln"],
    ["lManager", "manager", "lincoln"],
  ] as const)
    tok[key] = (await createApiToken(db.prisma, { role, name: key, tenantId })).token;
  const sub = (id: string, tenant: string | null) =>
    createSubscription(db.prisma, { id, name: id, url: `https://${id}.example.test/h`, eventTypes: ["assignment.graded"], ...(tenant ? { tenant } : {}) }, SYSTEM);
  await sub("sub_linc", "lincoln");
  await sub("sub_jeff", "jefferson");
  // A global admin's tenant-less endpoint: it receives every tenant's events, Lincoln's included.
  await sub("sub_hub", null);
  for (const [id, student] of [
    ["evt_jeff_1", "stu_j1"],
    ["evt_jeff_2", "stu_j2"],
  ]) {
    const r = await call(events.POST, {
      token: tok.producer,
      body: { id, type: "assignment.graded", data: { score: 70 }, subject: { tenant: "jefferson", studentId: student } },
    });
    expect(r.status, r.text).toBe(202);
  }
  const erased = await call(erasures.POST, { token: tok.admin, body: { subject: { studentId: "stu_j2" }, tenant: "jefferson", reason: "records request 1" } });
  expect(erased.status, erased.text).toBe(200);
});
afterAll(async () => db?.close());

const lincoln = (id: string, score: number, type = "assignment.graded") => ({ id, type, data: { score }, subject: { tenant: "lincoln", studentId: "stu_l1" } });
/** An answer with the event id (and a batch index) taken out: what is left must not tell one conflict from another. */
const shape = (text: string, id: string) => text.split(id).join("<id>");

describe("a scoped producer's conflict on another tenant's event id", () => {
  it("is answered as its own conflict would be: no stored type, no erasure", async () => {
    expect((await call(events.POST, { token: tok.lProducer, body: lincoln("evt_linc_1", 1) })).status).toBe(202);
    const own = await call(events.POST, { token: tok.lProducer, body: lincoln("evt_linc_1", 2) });
    expect(own.status).toBe(409);
    const before = await tableCounts(db.pool);
    const jeffs = await call(events.POST, { token: tok.lProducer, body: lincoln("evt_jeff_1", 2, "roster.updated") });
    const erased = await call(events.POST, { token: tok.lProducer, body: lincoln("evt_jeff_2", 2) });
    expect(await tableCounts(db.pool)).toEqual(before);
    expect([jeffs.status, erased.status]).toEqual([409, 409]);
    expect(shape(jeffs.text, "evt_jeff_1")).toBe(shape(own.text, "evt_linc_1"));
    expect(shape(erased.text, "evt_jeff_2")).toBe(shape(own.text, "evt_linc_1"));
    for (const r of [own, jeffs, erased]) expect(r.text).not.toMatch(/assignment\.graded|roster|eras|er_[0-9a-f]/);
  });

  it("in a batch too", async () => {
    const r = await call(batch.POST, {
      path: "/api/v1/events/batch",
      token: tok.lProducer,
      body: { events: [lincoln("evt_linc_1", 3), lincoln("evt_jeff_1", 3, "roster.updated"), lincoln("evt_jeff_2", 3)] },
    });
    expect(r.status, r.text).toBe(200);
    const [own, jeffs, erased] = r.json.results.map((x: { error: unknown }) => JSON.stringify(x.error));
    expect(shape(jeffs, "evt_jeff_1")).toBe(shape(own, "evt_linc_1"));
    expect(shape(erased, "evt_jeff_2")).toBe(shape(own, "evt_linc_1"));
    expect(r.text).not.toMatch(/assignment\.graded|roster|eras/);
  });

  it("a global producer is still told the stored type and the erasure", async () => {
    const r = await call(events.POST, { token: tok.producer, body: { ...lincoln("evt_jeff_1", 2, "roster.updated"), subject: { tenant: "jefferson" } } });
    expect(r.status).toBe(409);
    expect(r.json.error.message).toContain("assignment.graded");
    const e = await call(events.POST, { token: tok.producer, body: { ...lincoln("evt_jeff_2", 2), subject: { tenant: "jefferson" } } });
    expect(e.json.error.code).toBe("event_erased");
  });
});

describe("a scoped principal's subscription ids", () => {
  const body = (id?: string) => ({
    ...(id ? { id } : {}),
    name: "Lincoln LMS",
    url: "https://lms.lincoln.example.test/h",
    eventTypes: ["assignment.graded"],
    tenant: "lincoln",
  });

  it("are not its to choose: another tenant's id and an unused one get the same 400, and nothing is written", async () => {
    const before = await tableCounts(db.pool);
    const taken = await call(subscriptions.POST, { token: tok.lManager, body: body("sub_jeff") });
    const free = await call(subscriptions.POST, { token: tok.lManager, body: body("sub_never_used") });
    expect([taken.status, free.status]).toEqual([400, 400]);
    expect(shape(taken.text, "sub_jeff")).toBe(shape(free.text, "sub_never_used"));
    expect(taken.text).not.toMatch(/already exists|jefferson/i);
    expect(taken.json.error.message).toMatch(/leave id out/);
    expect(await tableCounts(db.pool)).toEqual(before);
  });

  it("are generated when it leaves id out", async () => {
    const r = await call(subscriptions.POST, { token: tok.lManager, body: body() });
    expect(r.status, r.text).toBe(201);
    expect(r.json.id).toMatch(/^sub_[0-9a-f]{12}$/);
    expect(r.json.tenant).toBe("lincoln");
    // Out of the way of the publish tests below: an archived subscription matches no event.
    await db.pool.query("UPDATE subscriptions SET archived_at = now(), archive_reason = 'test', archived_by = 'test' WHERE id = $1", [r.json.id]);
  });

  it("a global admin still chooses ids, and is told when one exists", async () => {
    const r = await call(subscriptions.POST, { token: tok.admin, body: { ...body("sub_jeff"), tenant: "jefferson" } });
    expect(r.status).toBe(409);
    expect(r.json.error.message).toMatch(/already exists/);
  });
});

describe("a scoped producer's publish answer", () => {
  const subsOf = (deliveries: { subscriptionId: string }[]) => deliveries.map((d) => d.subscriptionId);

  it("lists the deliveries of its tenant's subscriptions only, though the tenant-less one got one too", async () => {
    const r = await call(events.POST, { token: tok.lProducer, body: lincoln("evt_linc_2", 1) });
    expect(r.status, r.text).toBe(202);
    expect(subsOf(r.json.deliveries)).toEqual(["sub_linc"]);
    expect(r.text).not.toContain("sub_hub");
    const stored = await db.pool.query("SELECT subscription_id FROM deliveries WHERE event_id = 'evt_linc_2' ORDER BY 1");
    expect(stored.rows.map((x) => x.subscription_id)).toEqual(["sub_hub", "sub_linc"]);
    const again = await call(events.POST, { token: tok.lProducer, body: lincoln("evt_linc_2", 1) });
    expect(again.status).toBe(200);
    expect(subsOf(again.json.deliveries)).toEqual(["sub_linc"]);
  });

  it("in a batch, a first publish, a republish and a repeat within the batch alike", async () => {
    const r = await call(batch.POST, {
      path: "/api/v1/events/batch",
      token: tok.lProducer,
      body: { events: [lincoln("evt_linc_3", 1), lincoln("evt_linc_2", 1), lincoln("evt_linc_3", 1)] },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json.results.map((x: { status: string }) => x.status)).toEqual(["created", "duplicate", "duplicate"]);
    for (const x of r.json.results) expect(subsOf(x.deliveries)).toEqual(["sub_linc"]);
    expect(r.text).not.toContain("sub_hub");
  });

  it("a global producer's answer still lists every delivery", async () => {
    const r = await call(events.POST, { token: tok.producer, body: lincoln("evt_linc_4", 1) });
    expect(subsOf(r.json.deliveries)).toEqual(["sub_hub", "sub_linc"]);
    const again = await call(events.POST, { token: tok.producer, body: lincoln("evt_linc_2", 1) });
    expect(subsOf(again.json.deliveries)).toEqual(["sub_hub", "sub_linc"]);
  });
});

// Every public /api/v1 route's answer is what the OpenAPI document says: each
// route is called for real (a real database, the route handlers themselves)
// and its JSON is parsed with the response schema the document was generated
// from (lib/api/views.ts, through API_OPERATIONS), for each success status it
// gives. Parsing drops fields a schema does not name, so "parsed equals the
// answer" fails both for a field the document lacks and for one it wrongly
// requires or types; an answer with a status the document does not list fails
// too. The types of the schemas and of the services the routes call are
// compared at compile time as well, so a field added to a service's answer
// fails `tsc` before it reaches a client.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { startReceiver, type Receiver } from "../helpers/worker-helpers";
import { seedDeadLetters } from "../helpers/redrive-helpers";
import { API_OPERATIONS, type HttpMethod } from "../../lib/api/openapi";
import * as v from "../../lib/api/views";
import { sampleDlq } from "../../lib/rollups/sampler";
import type { TenantView } from "../../lib/tenants/manage-tenants";
import type { rotateSecret, SecretMeta } from "../../lib/subscriptions/rotation";
import type { TestSendView } from "../../lib/net/test-send";
import type { ArchiveResult } from "../../lib/subscriptions/archive";
import type { DeliveryView } from "../../lib/api/views";
import type { redriveDelivery, RedriveBatchListItem, RedriveBatchProgress, RedriveBatchView, RedrivePreview } from "../../lib/redrive/redrive-batches";
import type { BackfillPreview, RecoverPreview } from "../../lib/recover/recover-and-backfill";
import type { BulkResolveResult, ResolvePreview } from "../../lib/resolve/resolve-and-resend";
import type { DlqSummary, findDlqHistory } from "../../lib/dashboard/dead-letters";
import type { RetentionOverview, RetentionPolicy, RetentionReport } from "../../lib/retention/run-retention";
import type { ErasureReceipt } from "../../lib/erasure/create-erasure";
import * as tenants from "../../app/api/v1/tenants/route";
import * as portalSessions from "../../app/api/v1/portal/sessions/route";
import * as portalSession from "../../app/api/v1/portal/sessions/[id]/route";
import type { PortalSessionView, revokePortalSession } from "../../lib/portal/portal-sessions";
import * as tenantContacts from "../../app/api/v1/tenants/[id]/contacts/route";
import * as notifications from "../../app/api/v1/notifications/route";
import * as notificationSettings from "../../app/api/v1/notifications/settings/route";
import type { ContactsView } from "../../lib/notify/contacts";
import type { NotificationView } from "../../lib/ledger/sql/notifications";
import * as subscriptions from "../../app/api/v1/subscriptions/route";
import * as subscription from "../../app/api/v1/subscriptions/[id]/route";
import * as secrets from "../../app/api/v1/subscriptions/[id]/secrets/route";
import * as secret from "../../app/api/v1/subscriptions/[id]/secrets/[secretId]/route";
import * as testSend from "../../app/api/v1/subscriptions/[id]/test/route";
import * as archive from "../../app/api/v1/subscriptions/[id]/archive/route";
import * as unarchive from "../../app/api/v1/subscriptions/[id]/unarchive/route";
import * as recover from "../../app/api/v1/subscriptions/[id]/recover/route";
import * as backfill from "../../app/api/v1/subscriptions/[id]/backfill/route";
import * as events from "../../app/api/v1/events/route";
import * as batch from "../../app/api/v1/events/batch/route";
import * as deliveries from "../../app/api/v1/deliveries/route";
import * as delivery from "../../app/api/v1/deliveries/[id]/route";
import * as redriveOne from "../../app/api/v1/deliveries/[id]/redrive/route";
import * as resolveOne from "../../app/api/v1/deliveries/[id]/resolve/route";
import * as resendOne from "../../app/api/v1/deliveries/[id]/resend/route";
import * as dlq from "../../app/api/v1/dlq/route";
import * as dlqHistory from "../../app/api/v1/dlq/history/route";
import * as dlqResolve from "../../app/api/v1/dlq/resolve/route";
import * as redrives from "../../app/api/v1/redrives/route";
import * as redriveBatch from "../../app/api/v1/redrives/[id]/route";
import * as redriveCancel from "../../app/api/v1/redrives/[id]/cancel/route";
import * as erasures from "../../app/api/v1/erasures/route";
import * as retention from "../../app/api/v1/retention/route";
import * as retentionRun from "../../app/api/v1/retention/run/route";
import * as eventTypes from "../../app/api/v1/event-types/route";
import * as eventType from "../../app/api/v1/event-types/[type]/route";
import type { DeleteOutcome, EventTypeView } from "../../lib/catalog/manage-event-types";

/** The two types accept each other: a field added, dropped or retyped on either side fails to compile. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
function agrees<A, B>(..._mismatch: Same<A, B> extends true ? [] : ["the response schema's type and the service's answer differ"]): void {}
/** The schema's type is one the service's type holds: a field the service adds or retypes fails; the document may be the narrower (a state's names for a string). */
function narrows<_A extends B, B>(): void {}
type Out<S extends z.ZodType> = z.output<S>;
type Preview = { id: null; status: "preview" };

// What the routes add to or take from a service's answer, as the handlers do.
agrees<Out<typeof v.ZTenantView>, TenantView>();
agrees<Out<typeof v.ZPortalSessionView>, PortalSessionView>();
agrees<Out<typeof v.ZPortalSessionRevoked>, Awaited<ReturnType<typeof revokePortalSession>>>();
agrees<Out<typeof v.ZContactsView>, ContactsView>();
agrees<Out<typeof v.ZNotificationView>, NotificationView>();
agrees<Out<typeof v.ZSecretMeta>, SecretMeta>();
agrees<Out<typeof v.ZSecretRotated>, Awaited<ReturnType<typeof rotateSecret>>>();
agrees<Out<typeof v.ZTestSendView>, TestSendView>();
// The subscription's and delivery's views name the states the service types as strings.
narrows<Out<typeof v.ZSubscriptionArchived>, ArchiveResult>();
narrows<Out<typeof v.ZDeliveryView>, DeliveryView>();
narrows<Out<typeof v.ZDeliveryRedriven>, Awaited<ReturnType<typeof redriveDelivery>>>();
// A batch's stored filter is typed by the service as any string states; the document names the states a recover takes.
agrees<Omit<Out<typeof v.ZRedriveBatchView>, "filter">, Omit<RedriveBatchView, "filter">>();
agrees<Omit<Out<typeof v.ZRedriveBatchProgress>, "filter">, Omit<RedriveBatchProgress, "filter">>();
agrees<Omit<Out<typeof v.ZRedriveBatchListItem>, "filter">, Omit<RedriveBatchListItem, "filter">>();
narrows<Out<typeof v.ZRedriveBatchView>["filter"], RedriveBatchView["filter"]>();
agrees<Out<typeof v.ZRedrivePreview>, Preview & RedrivePreview>();
agrees<Out<typeof v.ZRecoverPreview>, Preview & RecoverPreview>();
agrees<Out<typeof v.ZBackfillPreview>, Preview & BackfillPreview>();
agrees<Out<typeof v.ZResolvePreview>, Preview & ResolvePreview>();
agrees<Out<typeof v.ZBulkResolved>, { status: "resolved" } & BulkResolveResult>();
agrees<Out<typeof v.ZDlqSummary>, DlqSummary>();
agrees<Out<typeof v.ZDlqHistoryView>, Awaited<ReturnType<typeof findDlqHistory>>>();
agrees<Out<typeof v.ZRetentionPolicyView>, RetentionPolicy>();
narrows<Out<typeof v.ZRetentionPreview> | Out<typeof v.ZRetentionStarted>, RetentionReport>();
agrees<Out<typeof v.ZRetentionReport>, RetentionReport>();
// A run's stored policy is unknown to the ledger's reader; the document says what every run stores (lib/retention/run-retention.ts).
type Runs = RetentionOverview["runs"][number];
agrees<Omit<RetentionOverview, "runs">, Omit<Out<typeof v.ZRetentionOverview>, "runs">>();
agrees<Omit<Out<typeof v.ZRetentionOverview>["runs"][number], "policy">, Omit<Runs, "policy">>();
agrees<Out<typeof v.ZRetentionOverview>["runs"][number]["policy"], RetentionPolicy>();
agrees<Out<typeof v.ZErasureReceipt>, ErasureReceipt>();
agrees<Out<typeof v.ZEventTypeView>, EventTypeView>();
agrees<Out<typeof v.ZEventTypeDeleted>, DeleteOutcome>();

let db: TestDb;
let admin: string;
let receiver: Receiver;
/** "post /api/v1/redrives 201" for each answer checked. */
const checked = new Set<string>();

beforeAll(async () => {
  process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS = "1";
  db = await createTestDatabase();
  admin = await tokenFor(db.prisma, "admin");
  receiver = await startReceiver((_req, res) => {
    res.writeHead(202, { "content-type": "text/plain", "x-district-request": "req-7" });
    res.end("queued");
  });
});
afterAll(async () => {
  await receiver?.close();
  await db?.close();
});

type Answer = { status: number; json: unknown; text: string };

/** The answer is exactly what the document's schema for its status describes. */
function conforms(method: HttpMethod, path: string, r: Answer, status: number): Answer {
  expect(r.status, `${method} ${path}: ${r.text}`).toBe(status);
  const op = API_OPERATIONS.find((o) => o.path === path && o.method === method);
  expect(op, `${method} ${path} in API_OPERATIONS`).toBeTruthy();
  const schema = op!.status === r.status ? op!.response : op!.also?.status === r.status ? op!.also.response : undefined;
  expect(schema, `${method} ${path} answered ${r.status}, which the document does not give`).toBeTruthy();
  const parsed = schema!.safeParse(r.json);
  expect(parsed.error?.issues ?? [], `${method} ${path} ${r.status}: ${r.text.slice(0, 2000)}`).toEqual([]);
  expect(parsed.data, `${method} ${path} ${r.status}: fields the document does not describe`).toEqual(r.json);
  checked.add(`${method} ${path} ${r.status}`);
  return r;
}

const since = () => new Date(Date.now() - 3_600_000).toISOString();
const graded = (id: string, studentId = "stu_pub") => ({ id, type: "assignment.graded", data: { score: 91 }, subject: { tenant: "lincoln", studentId } });
let deadLetters: string[] = [];

describe("the operators' routes answer what the OpenAPI document describes", () => {
  it("tenants, subscriptions, publishing and signing secrets", async () => {
    conforms("post", "/api/v1/tenants", await call(tenants.POST, { token: admin, body: { id: "lincoln", name: "Lincoln USD" } }), 201);
    const list = conforms("get", "/api/v1/tenants", await call(tenants.GET, { token: admin }), 200);
    expect((list.json as { items: unknown[] }).items).toHaveLength(1);

    const body = { id: "sub_views", name: "Lincoln SIS", tenant: "lincoln", url: receiver.url, eventTypes: ["assignment.graded"] };
    conforms("post", "/api/v1/subscriptions", await call(subscriptions.POST, { token: admin, body }), 201);
    conforms("get", "/api/v1/subscriptions", await call(subscriptions.GET, { token: admin }), 200);
    conforms("get", "/api/v1/subscriptions/{id}", await call(subscription.GET, { token: admin, params: { id: "sub_views" } }), 200);
    const patch = await call(subscription.PATCH, { method: "PATCH", token: admin, params: { id: "sub_views" }, body: { name: "Lincoln SIS 2" } });
    conforms("patch", "/api/v1/subscriptions/{id}", patch, 200);

    conforms("post", "/api/v1/events", await call(events.POST, { token: admin, body: graded("evt_views_pub") }), 202);
    const b = await call(batch.POST, { token: admin, path: "/api/v1/events/batch", body: { events: [graded("evt_views_b1"), { id: "evt_views_bad" }] } });
    conforms("post", "/api/v1/events/batch", b, 200);

    const rotated = conforms(
      "post",
      "/api/v1/subscriptions/{id}/secrets",
      await call(secrets.POST, { token: admin, params: { id: "sub_views" }, body: { overlapSeconds: 600 } }),
      201,
    );
    expect((rotated.json as { previous: unknown[] }).previous).toHaveLength(1);
    const listed = conforms("get", "/api/v1/subscriptions/{id}/secrets", await call(secrets.GET, { token: admin, params: { id: "sub_views" } }), 200);
    const old = (listed.json as { items: { id: string; expiresAt: string | null }[] }).items.find((s) => s.expiresAt)!;
    const ended = await call(secret.DELETE, { method: "DELETE", token: admin, params: { id: "sub_views", secretId: old.id } });
    conforms("delete", "/api/v1/subscriptions/{id}/secrets/{secretId}", ended, 200);
  });

  it("test sends: a ping the endpoint answered, and the list", async () => {
    const sent = conforms("post", "/api/v1/subscriptions/{id}/test", await call(testSend.POST, { token: admin, params: { id: "sub_views" }, body: {} }), 200);
    expect(sent.json).toMatchObject({ status: 202, body: "queued", eventId: null });
    const withEvent = await call(testSend.POST, { token: admin, params: { id: "sub_views" }, body: { eventId: "evt_views_pub" } });
    expect(conforms("post", "/api/v1/subscriptions/{id}/test", withEvent, 200).json).toMatchObject({ eventId: "evt_views_pub" });
    const recent = conforms("get", "/api/v1/subscriptions/{id}/test", await call(testSend.GET, { token: admin, params: { id: "sub_views" } }), 200);
    expect((recent.json as { items: unknown[] }).items).toHaveLength(2);
  });

  it("deliveries one by one: list, get, redrive, resolve, resend", async () => {
    deadLetters = await seedDeadLetters(db, { subscriptionId: "sub_views", n: 6, prefix: "evt_views_dl_" });
    conforms("get", "/api/v1/deliveries", await call(deliveries.GET, { token: admin, path: "/api/v1/deliveries?subscriptionId=sub_views" }), 200);
    conforms("get", "/api/v1/deliveries/{id}", await call(delivery.GET, { token: admin, params: { id: deadLetters[0] } }), 200);
    const redriven = await call(redriveOne.POST, { token: admin, params: { id: deadLetters[0] }, body: { reason: "INC-1 district fixed it" } });
    expect(conforms("post", "/api/v1/deliveries/{id}/redrive", redriven, 200).json).toMatchObject({ state: "pending", redrive: { action: "redrive" } });
    const resolved = await call(resolveOne.POST, { token: admin, params: { id: deadLetters[1] }, body: { resolution: "discarded", reason: "INC-2 test data" } });
    expect(conforms("post", "/api/v1/deliveries/{id}/resolve", resolved, 200).json).toMatchObject({ state: "resolved", resolution: { resolution: "discarded" } });
    const resent = await call(resendOne.POST, { token: admin, params: { id: deadLetters[1] }, body: { reason: "INC-3 they lost it" } });
    expect(conforms("post", "/api/v1/deliveries/{id}/resend", resent, 200).json).toMatchObject({ state: "pending" });
  });

  it("the DLQ: the summary, its history, a bulk resolve's preview", async () => {
    const summary = conforms("get", "/api/v1/dlq", await call(dlq.GET, { token: admin, path: "/api/v1/dlq" }), 200);
    expect(summary.json).toMatchObject({ depth: 4 });
    expect((summary.json as { groups: unknown[] }).groups.length).toBeGreaterThan(0);
    await sampleDlq(db.pool, { minGapMs: 0 });
    const history = conforms("get", "/api/v1/dlq/history", await call(dlqHistory.GET, { token: admin, path: "/api/v1/dlq/history?hours=1" }), 200);
    expect((history.json as { points: unknown[] }).points.length).toBeGreaterThan(0);
    const filter = { subscriptionId: "sub_views" };
    const preview = await call(dlqResolve.POST, { token: admin, body: { filter, resolution: "superseded", reason: "INC-4 preview", dryRun: true } });
    expect(conforms("post", "/api/v1/dlq/resolve", preview, 200).json).toMatchObject({ id: null, status: "preview", matched: 4 });
  });

  it("bulk redrives: preview, create, list, get, cancel; then the rest resolved in bulk", async () => {
    const filter = { subscriptionId: "sub_views" };
    const preview = await call(redrives.POST, { token: admin, body: { filter, dryRun: true, latestStateWins: true } });
    expect(conforms("post", "/api/v1/redrives", preview, 200).json).toMatchObject({ id: null, matched: 4, superseded: 0 });
    const created = conforms(
      "post",
      "/api/v1/redrives",
      await call(redrives.POST, { token: admin, body: { filter, reason: "INC-5 outage over", ratePerSecond: 1 } }),
      201,
    );
    const id = (created.json as { id: string }).id;
    conforms("get", "/api/v1/redrives", await call(redrives.GET, { token: admin, path: "/api/v1/redrives" }), 200);
    conforms("get", "/api/v1/redrives/{id}", await call(redriveBatch.GET, { token: admin, params: { id } }), 200);
    const cancelled = await call(redriveCancel.POST, { token: admin, params: { id }, body: { reason: "INC-5 wrong window" } });
    expect(conforms("post", "/api/v1/redrives/{id}/cancel", cancelled, 200).json).toMatchObject({ id, status: "cancelled" });
    const resolved = await call(dlqResolve.POST, { token: admin, body: { filter, resolution: "superseded", reason: "INC-6 replaced upstream" } });
    expect(conforms("post", "/api/v1/dlq/resolve", resolved, 200).json).toMatchObject({ status: "resolved", resolution: "superseded", filter });
  });

  it("recover and backfill: previews and batches, followed as redrives", async () => {
    const window = { since: since(), reason: "INC-7 district restore", ratePerSecond: 5 };
    const preview = await call(recover.POST, { token: admin, params: { id: "sub_views" }, body: { ...window, dryRun: true } });
    expect(conforms("post", "/api/v1/subscriptions/{id}/recover", preview, 200).json).toMatchObject({ id: null, kind: "recover" });
    const rec = conforms("post", "/api/v1/subscriptions/{id}/recover", await call(recover.POST, { token: admin, params: { id: "sub_views" }, body: window }), 201);
    const got = await call(redriveBatch.GET, { token: admin, params: { id: (rec.json as { id: string }).id } });
    expect(conforms("get", "/api/v1/redrives/{id}", got, 200).json).toMatchObject({ kind: "recover", filter: { subscriptionId: "sub_views" } });

    const body = { id: "sub_views_new", name: "Lincoln new SIS", tenant: "lincoln", url: receiver.url, eventTypes: ["assignment.graded"] };
    expect((await call(subscriptions.POST, { token: admin, body })).status).toBe(201);
    const bfPreview = await call(backfill.POST, { token: admin, params: { id: "sub_views_new" }, body: { ...window, dryRun: true } });
    expect(conforms("post", "/api/v1/subscriptions/{id}/backfill", bfPreview, 200).json).toMatchObject({ id: null, kind: "backfill" });
    const bf = await call(backfill.POST, { token: admin, params: { id: "sub_views_new" }, body: window });
    expect(conforms("post", "/api/v1/subscriptions/{id}/backfill", bf, 201).json).toMatchObject({ kind: "backfill" });
    const kinds = await call(redrives.GET, { token: admin, path: "/api/v1/redrives?kind=backfill" });
    expect((conforms("get", "/api/v1/redrives", kinds, 200).json as { items: unknown[] }).items).toHaveLength(1);
  });

  it("archive and unarchive", async () => {
    const archived = await call(archive.POST, { token: admin, params: { id: "sub_views_new" }, body: { reason: "district moved to the new endpoint" } });
    expect(conforms("post", "/api/v1/subscriptions/{id}/archive", archived, 200).json).toMatchObject({ superseded: expect.any(Number) });
    const back = await call(unarchive.POST, { token: admin, params: { id: "sub_views_new" }, body: { reason: "district came back" } });
    conforms("post", "/api/v1/subscriptions/{id}/unarchive", back, 200);
  });

  it("erasure: a dry run's counts and a receipt", async () => {
    const input = { subject: { studentId: "stu_2" }, tenant: "lincoln", reason: "records request 12" };
    const dry = await call(erasures.POST, { token: admin, body: { ...input, dryRun: true } });
    expect(conforms("post", "/api/v1/erasures", dry, 200).json).toMatchObject({ id: null, status: "preview", events: 1 });
    const done = await call(erasures.POST, { token: admin, body: input });
    expect(conforms("post", "/api/v1/erasures", done, 200).json).toMatchObject({ status: "finished", events: 1, reasonsScrubbed: 0, eventIdsWithValue: 0 });
  });

  it("retention: the overview, an override, a dry run and a run, and the overview with that run", async () => {
    conforms("get", "/api/v1/retention", await call(retention.GET, { token: admin }), 200);
    const put = await call(retention.PUT, { method: "PUT", token: admin, body: { tenant: "lincoln", retentionDays: 30, payloadRetentionDays: 7 } });
    expect(conforms("put", "/api/v1/retention", put, 200).json).toMatchObject({ overrides: [{ tenant: "lincoln", retentionDays: 30, payloadRetentionDays: 7 }] });
    const dry = await call(retentionRun.POST, { token: admin, body: { dryRun: true } });
    expect(conforms("post", "/api/v1/retention/run", dry, 200).json).toMatchObject({ id: null, status: "preview" });
    const started = conforms("post", "/api/v1/retention/run", await call(retentionRun.POST, { token: admin, body: {} }), 202);
    const id = (started.json as { id: string }).id;
    for (const end = Date.now() + 30_000; ; await new Promise((r) => setTimeout(r, 50))) {
      const { rows } = await db.pool.query("SELECT status FROM retention_runs WHERE id = $1", [id]);
      if (rows[0]?.status !== "running") break;
      if (Date.now() > end) throw new Error(`retention run ${id} did not finish in 30 s`);
    }
    const overview = conforms("get", "/api/v1/retention", await call(retention.GET, { token: admin }), 200);
    expect((overview.json as { runs: unknown[] }).runs[0]).toMatchObject({ id, status: "finished", policy: { overrides: [{ tenant: "lincoln" }] } });
  });

  it("the event catalog: create, list, get, change, delete", async () => {
    const schema = { type: "object", required: ["score"], properties: { score: { type: "number" } } };
    const body = { type: "course.graded", description: "A course grade.", schema, example: { score: 3 } };
    conforms("post", "/api/v1/event-types", await call(eventTypes.POST, { token: admin, body }), 201);
    conforms("get", "/api/v1/event-types", await call(eventTypes.GET, { token: admin }), 200);
    const params = { type: "course.graded" };
    conforms("get", "/api/v1/event-types/{type}", await call(eventType.GET, { token: admin, params }), 200);
    conforms("put", "/api/v1/event-types/{type}", await call(eventType.PUT, { method: "PUT", token: admin, params, body: { deprecated: true } }), 200);
    conforms("delete", "/api/v1/event-types/{type}", await call(eventType.DELETE, { method: "DELETE", token: admin, params }), 200);
  });

  it("notifications: a tenant's contacts set and read, the notices listed", async () => {
    const params = { id: "lincoln" };
    const body = { emails: ["it@lincoln.example"], webhookUrl: receiver.url };
    conforms("put", "/api/v1/tenants/{id}/contacts", await call(tenantContacts.PUT, { method: "PUT", token: admin, params, body }), 200);
    conforms("get", "/api/v1/tenants/{id}/contacts", await call(tenantContacts.GET, { token: admin, params }), 200);
    await db.pool.query(
      `INSERT INTO notifications (id, tenant, subscription_id, kind, channel, recipient, subject, body, source, status, attempts, sent_at)
       VALUES ('ntf_views', 'lincoln', 'sub_views', 'paused', 'email', 'it@lincoln.example', 'Lincoln USD: paused', 'body', 'evt_views', 'sent', 1, now())`,
    );
    const list = conforms("get", "/api/v1/notifications", await call(notifications.GET, { token: admin, path: "/api/v1/notifications?limit=1" }), 200);
    expect((list.json as { items: unknown[] }).items).toHaveLength(1);
    conforms("get", "/api/v1/notifications/settings", await call(notificationSettings.GET, { token: admin }), 200);
    conforms("put", "/api/v1/notifications/settings", await call(notificationSettings.PUT, { method: "PUT", token: admin, body: { dlqThreshold: 50 } }), 200);
  });

  it("portal links: minted and revoked", async () => {
    const made = conforms("post", "/api/v1/portal/sessions", await call(portalSessions.POST, { token: admin, body: { tenant: "lincoln", readOnly: true } }), 201);
    const params = { id: (made.json as { id: string }).id };
    conforms("delete", "/api/v1/portal/sessions/{id}", await call(portalSession.DELETE, { method: "DELETE", token: admin, params }), 200);
  });

  it("every public route and each success status it documents was checked above", () => {
    const documented = API_OPERATIONS.filter((o) => !/^\/api\/v1\/(dashboard\/|openapi\.json$)/.test(o.path)).flatMap((o) => [
      `${o.method} ${o.path} ${o.status}`,
      ...(o.also ? [`${o.method} ${o.path} ${o.also.status}`] : []),
    ]);
    expect(documented.filter((k) => !checked.has(k))).toEqual([]);
  });
});

// A credential in the endpoint URL (Azure Functions' ?code=, a gateway's
// ?api_key=) is shown masked to every read-only reader: the API's reads, the
// dashboard's answers, the lookup, test sends. A caller who may change the
// subscription reads the URL as stored. A URL holding the mask is never stored
// in place of the real one, and a redirect that echoes the URL's credential
// does not put it into the attempts table.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { attemptsOf, deliveryOf, seedEvents, startReceiver, waitFor, worker, type Receiver } from "../helpers/worker-helpers";
import * as subs from "../../app/api/v1/subscriptions/route";
import * as sub from "../../app/api/v1/subscriptions/[id]/route";
import * as testRoute from "../../app/api/v1/subscriptions/[id]/test/route";
import * as dashSub from "../../app/api/v1/dashboard/subscriptions/[id]/route";
import * as dashSubs from "../../app/api/v1/dashboard/subscriptions/route";
import * as lookup from "../../app/api/v1/dashboard/lookup/route";
import * as dashDelivery from "../../app/api/v1/dashboard/deliveries/[id]/route";
import type { DeliveryWorker } from "../../worker/worker";

const CODE = `fn_${randomBytes(12).toString("hex")}`;
const KEY = `ak_${randomBytes(12).toString("hex")}`;

let db: TestDb;
let manager: string;
let support: string;
let receiver: Receiver;
let stored: string;
let masked: string;
let w: DeliveryWorker | undefined;

const storedUrl = async () => (await db.pool.query("SELECT url FROM subscriptions WHERE id = 'sub_fn'")).rows[0].url as string;

beforeAll(async () => {
  process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS = "1";
  db = await createTestDatabase();
  manager = await tokenFor(db.prisma, "manager");
  support = await tokenFor(db.prisma, "support");
  await db.prisma.tenant.create({ data: { id: "lincoln", name: "Lincoln USD" } });
  // A gateway that redirects to its sign-in page with the request's own address, credential and all.
  receiver = await startReceiver((req, res) => {
    res.writeHead(302, { location: `https://sso.district.example/login?next=${encodeURIComponent(`http://127.0.0.1${req.url}`)}&again=${CODE}` });
    res.end();
  });
  stored = `${receiver.url}?code=${CODE}&district=lincoln&API_KEY=${KEY}`;
  masked = `${receiver.url}?code=****&district=lincoln&API_KEY=****`;
  const r = await call(subs.POST, {
    token: manager,
    body: { id: "sub_fn", name: "Azure function", url: stored, eventTypes: ["assignment.graded"], tenant: "lincoln", retryPolicy: { ladderSeconds: [3600] } },
  });
  expect(r.status, r.text).toBe(201);
  // The creator gets what it stored.
  expect(r.json.url).toBe(stored);
});

afterAll(async () => {
  await w?.stop();
  await receiver?.close();
  await db?.close();
});

describe("reads", () => {
  it("a read-only token gets the URL masked; a token that may change the subscription gets it as stored", async () => {
    const asSupport = await call(sub.GET, { token: support, params: { id: "sub_fn" } });
    expect(asSupport.status, asSupport.text).toBe(200);
    expect(asSupport.json.url).toBe(masked);
    expect(asSupport.text).not.toContain(CODE);
    expect(asSupport.text).not.toContain(KEY);
    const asManager = await call(sub.GET, { token: manager, params: { id: "sub_fn" } });
    expect(asManager.json.url).toBe(stored);

    const list = await call(subs.GET, { token: support, path: "/api/v1/subscriptions?tenant=lincoln" });
    expect(list.json.items.map((s: { url: string }) => s.url)).toEqual([masked]);
    const managerList = await call(subs.GET, { token: manager, path: "/api/v1/subscriptions?tenant=lincoln" });
    expect(managerList.json.items.map((s: { url: string }) => s.url)).toEqual([stored]);
  });

  it("a search of the list cannot spell out the credential", async () => {
    for (const token of [support, manager]) {
      const hit = await call(subs.GET, { token, path: `/api/v1/subscriptions?q=${CODE.slice(0, 8)}` });
      expect(hit.json.items, hit.text).toEqual([]);
    }
    const byHost = await call(subs.GET, { token: support, path: "/api/v1/subscriptions?q=127.0.0.1" });
    expect(byHost.json.items.map((s: { id: string }) => s.id)).toEqual(["sub_fn"]);
  });

  it("the dashboard's answers and the lookup show the masked URL; the stored one only to a viewer who may edit", async () => {
    const ov = await call(dashSub.GET, { token: support, params: { id: "sub_fn" }, path: "/api/v1/dashboard/subscriptions/sub_fn" });
    expect(ov.status, ov.text).toBe(200);
    expect(ov.json.url).toBe(masked);
    expect(ov.json.storedUrl).toBeNull();
    expect(ov.text).not.toContain(CODE);
    const ovManager = await call(dashSub.GET, { token: manager, params: { id: "sub_fn" }, path: "/api/v1/dashboard/subscriptions/sub_fn" });
    expect(ovManager.json.url).toBe(masked);
    expect(ovManager.json.storedUrl).toBe(stored);

    const health = await call(dashSubs.GET, { token: manager, path: "/api/v1/dashboard/subscriptions?tenant=lincoln" });
    expect(health.json.items.map((s: { url: string }) => s.url)).toEqual([masked]);
    const found = await call(lookup.GET, { token: support, path: "/api/v1/dashboard/lookup?q=sub_fn" });
    expect(found.json.subscriptions.map((s: { url: string }) => s.url)).toEqual([masked]);
    expect(found.text).not.toContain(CODE);
  });
});

describe("writes", () => {
  it("a PATCH of the masked form of the stored URL leaves the stored URL as it is", async () => {
    const r = await call(sub.PATCH, { method: "PATCH", token: manager, params: { id: "sub_fn" }, body: { url: masked, name: "Azure function (renamed)" } });
    expect(r.status, r.text).toBe(200);
    expect(r.json.url).toBe(stored);
    expect(await storedUrl()).toBe(stored);
    const audit = await db.pool.query("SELECT details FROM audit_entries WHERE action = 'subscription.update' AND target_id = 'sub_fn' ORDER BY id DESC LIMIT 1");
    expect(audit.rows[0].details.changed).toEqual(["name"]);
  });

  it("any other URL holding the mask is a 400 naming body.url, and nothing is written", async () => {
    const before = await db.pool.query("SELECT count(*)::int AS n FROM audit_entries");
    const r = await call(sub.PATCH, { method: "PATCH", token: manager, params: { id: "sub_fn" }, body: { url: masked.replace("/hooks", "/hooks/v2") } });
    expect(r.status, r.text).toBe(400);
    expect(r.json.error.message).toMatch(/url: a credential in it is the mask \*\*\*\*/);
    expect(r.json.error.details).toEqual([{ path: "body.url", message: expect.stringContaining("mask") }]);
    expect(await storedUrl()).toBe(stored);
    const created = await call(subs.POST, { token: manager, body: { name: "Copied", url: masked, eventTypes: ["assignment.graded"], tenant: "lincoln" } });
    expect(created.status, created.text).toBe(400);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM audit_entries")).rows[0].n).toBe(before.rows[0].n);
  });

  it("the audit log keeps the URL masked", async () => {
    const newCode = `fn_${randomBytes(12).toString("hex")}`;
    const r = await call(sub.PATCH, { method: "PATCH", token: manager, params: { id: "sub_fn" }, body: { url: stored.replace(CODE, newCode) } });
    expect(r.status, r.text).toBe(200);
    const { rows } = await db.pool.query("SELECT details::text AS d FROM audit_entries WHERE target_id = 'sub_fn'");
    expect(rows.map((x) => x.d).join("\n")).not.toMatch(new RegExp(`${CODE}|${newCode}|${KEY}`));
    await call(sub.PATCH, { method: "PATCH", token: manager, params: { id: "sub_fn" }, body: { url: stored } });
  });
});

describe("what the endpoint echoes", () => {
  it("test send: the redirect's Location is stored with the URL's credential masked; the record's url is masked", async () => {
    const r = await call(testRoute.POST, { token: manager, params: { id: "sub_fn" }, body: {} });
    expect(r.status, r.text).toBe(200);
    expect(r.json.status).toBe(302);
    expect(r.json.url).toBe(masked);
    expect(r.text).not.toContain(CODE);
    expect(r.text).not.toContain(KEY);
    const list = await call(testRoute.GET, { token: support, params: { id: "sub_fn" } });
    expect(list.text).not.toContain(CODE);
    const { rows } = await db.pool.query("SELECT error_message FROM test_sends WHERE subscription_id = 'sub_fn'");
    expect(rows[0].error_message).toMatch(/^Redirect to https:\/\/sso\.district\.example\/login\?next=.* not followed\.$/);
    expect(rows[0].error_message).not.toContain(CODE);
    expect(rows[0].error_message).not.toContain(KEY);
  });

  it("worker attempt: the stored error and the delivery's last error hold no credential of the URL", async () => {
    w = worker(db.url);
    await seedEvents(db.pool, "evt_fn_", 1, ["sub_fn"], "lincoln");
    const d = await waitFor(async () => {
      const x = await deliveryOf(db.pool, "sub_fn", "evt_fn_1");
      return x && x.attempt_count > 0 ? x : null;
    });
    const [attempt] = await attemptsOf(db.pool, d.id);
    expect(attempt.status_code).toBe(302);
    expect(attempt.error_message).toMatch(/^Redirect to https:\/\/sso\.district\.example\//);
    for (const text of [attempt.error_message, d.last_error_message]) {
      expect(text).not.toContain(CODE);
      expect(text).not.toContain(KEY);
    }
    // The delivery page names the endpoint masked, to a manager too.
    const page = await call(dashDelivery.GET, { token: manager, params: { id: d.id } });
    expect(page.status, page.text).toBe(200);
    expect(page.json.subscriptionUrl).toBe(masked);
    expect(page.text).not.toContain(CODE);
    expect(page.text).not.toContain(KEY);
  });
});

// The demo's simulated districts, control page and seeding, without a worker:
// each district answers the way its story says, the fix switches work, and a
// restart with the same data carries on.
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { startDemo, dlqReasons, DEMO_RETRY_POLICY, type Demo } from "../../demo/run";
import { openSecret } from "../../lib/subscriptions/secrets";
import { deliveryKey } from "../../lib/ledger/delivery-key";

let db: TestDb;
let demo: Demo;
let stateDir: string;
const secrets = new Map<string, string>();

beforeAll(async () => {
  db = await createTestDatabase();
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "hl-demo-state-"));
  demo = await startDemo({
    databaseUrl: db.url,
    dashboardUrl: "http://localhost:1",
    basePort: 0,
    stateDir,
    eventsPerSecond: 0,
    seedUser: false,
    waitForDashboard: false,
    log: () => {},
    knobs: {
      riverside: { ratePerWindow: 2, windowSeconds: 30 },
      cedarfalls: { dropRate: 1 },
      jefferson: { latencyMs: [1, 5], error500Rate: 0, hangRate: 0 },
      oakridge: { failAfterCommitRate: 0 },
    },
  });
  for (const s of await db.prisma.subscriptionSecret.findMany()) secrets.set(s.subscriptionId, openSecret(s.secret, s));
});
afterAll(async () => {
  await demo?.stop();
  await db?.close();
  fs.rmSync(stateDir, { recursive: true, force: true });
});

const district = (slug: string) => demo.districts.find((d) => d.info.slug === slug)!;

let seq = 0;
function event(overrides: { data?: Record<string, unknown> } = {}) {
  seq++;
  return {
    id: `evt_test_${seq}`,
    type: "assignment.graded",
    timestamp: new Date().toISOString(),
    data: { studentId: `stu_${seq}`, studentName: "Ava Johnson", assignmentId: "asg_101", score: 17, term_id: "fall-2026", ...overrides.data },
  };
}

/** POSTs an event the way the worker would: signed with the subscription's secret. */
type WireEvent = { id: string; type: string; timestamp: string; data: Record<string, unknown> };
async function send(slug: string, ev: WireEvent, opts: { id?: string; badSignature?: boolean } = {}) {
  const d = district(slug);
  const body = JSON.stringify(ev);
  const id = opts.id ?? deliveryKey(d.info.subscriptionId, ev.id);
  const ts = String(Math.floor(Date.now() / 1000));
  const key = Buffer.from((secrets.get(d.info.subscriptionId) ?? "whsec_AAAAAAAAAAAAAAAAAAAAAA==").slice(6), "base64");
  const sig = createHmac("sha256", opts.badSignature ? Buffer.from("wrong key material") : key)
    .update(`${id}.${ts}.${body}`)
    .digest("base64");
  const res = await fetch(d.url, {
    method: "POST",
    headers: { "content-type": "application/json", "webhook-id": id, "idempotency-key": id, "webhook-timestamp": ts, "webhook-signature": `v1,${sig}` },
    body,
  });
  return { status: res.status, headers: res.headers, text: await res.text(), id };
}

async function control(p: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${demo.controlUrl}${p}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text.startsWith("{") ? JSON.parse(text) : null, text };
}

describe("seeding", () => {
  it("creates one subscription per district, pointing at where it listens, with the demo retry policy", async () => {
    const subs = await db.prisma.subscription.findMany({ where: { id: { startsWith: "sub_demo_" } }, orderBy: { id: "asc" } });
    expect(subs).toHaveLength(7);
    for (const d of demo.districts) {
      const s = subs.find((x) => x.id === d.info.subscriptionId)!;
      expect(s.url).toBe(d.url);
      expect(s.tenant).toBe(d.info.slug);
      expect(s.retryPolicy).toEqual(DEMO_RETRY_POLICY);
    }
    // Every district got a real subscription audit row, as if a manager had created it.
    expect(await db.prisma.auditEntry.count({ where: { action: "subscription.create", targetId: { startsWith: "sub_demo_" } } })).toBe(7);
  });

  it("publishes realistic events only to the district they belong to, with unique ids", async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const id = await demo.traffic.publishOne(i % 2 ? "maplegrove" : "lincoln");
      expect(id).toBeTruthy();
      ids.add(id!);
    }
    expect(ids.size).toBe(20);
    const events = await db.prisma.event.findMany({ where: { id: { in: [...ids] } }, include: { deliveries: true } });
    for (const e of events) {
      expect(["lincoln", "maplegrove"]).toContain(e.tenant);
      const subject = e.subject as Record<string, unknown>;
      expect(subject.studentId).toMatch(/^stu_/);
      expect(subject.school).toMatch(/^sch_/);
      // Maple Grove subscribes to grades only; every Lincoln event reaches Lincoln.
      expect(e.deliveries.map((d) => d.subscriptionId)).toEqual(e.tenant === "lincoln" || e.type === "assignment.graded" ? [`sub_demo_${e.tenant}`] : []);
      const body = JSON.parse(Buffer.from(e.payload).toString("utf8"));
      if (e.type === "assignment.graded") expect(body.data).toMatchObject({ assignmentId: expect.stringMatching(/^asg_/), score: expect.any(Number) });
    }
  });
});

describe("simulated districts", () => {
  it("the healthy SIS answers 200 or 204 and applies once", async () => {
    const ev = event();
    const r = await send("lincoln", ev);
    expect([200, 204]).toContain(r.status);
    const again = await send("lincoln", ev);
    expect(again.status).toBe(200);
    expect(JSON.parse(again.text).status).toBe("duplicate");
    expect(district("lincoln").applied.get(r.id)?.n).toBe(1);
  });

  it("the legacy PHP handler 500s on an apostrophe until fixed, and writes a row per request", async () => {
    const ev = event({ data: { studentName: "Liam O'Brien" } });
    const r = await send("jefferson", ev);
    expect(r.status).toBe(500);
    expect(r.text).toMatch(/SQL syntax.*near 'Brien/);
    const ok = await send("jefferson", event());
    expect(ok.status).toBe(200);
    // It ignores webhook-id: the same delivery again is a second row.
    const okEv = event();
    await send("jefferson", okEv);
    await send("jefferson", okEv);
    expect(district("jefferson").stats.duplicatesApplied).toBe(1);
    expect((await control("/api/districts/jefferson/fix", { fixed: true })).json.fixed).toBe(true);
    expect((await send("jefferson", ev)).status).toBe(200);
  });

  it("the rate-limited district answers 429 with Retry-After past its quota, and not once lifted", async () => {
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await send("riverside", event()));
    const limited = answers.filter((a) => a.status === 429);
    expect(limited.length).toBeGreaterThanOrEqual(2);
    const ra = Number(limited[0].headers.get("retry-after"));
    expect(ra).toBeGreaterThanOrEqual(1);
    expect(ra).toBeLessThanOrEqual(30);
    await control("/api/districts/riverside/fix", {});
    expect((await send("riverside", event())).status).toBe(200);
  });

  it("the strict importer answers 422 missing field term_id, and accepts once fixed", async () => {
    const ev = event({ data: { term_id: undefined } });
    const r = await send("maplegrove", ev);
    expect(r.status).toBe(422);
    expect(JSON.parse(r.text).message).toBe("missing field term_id");
    expect((await send("maplegrove", event())).status).toBe(200);
    await control("/api/districts/maplegrove/fix", { fixed: true });
    expect((await send("maplegrove", ev)).status).toBe(200);
    await control("/api/districts/maplegrove/break", {});
    expect(district("maplegrove").fixed).toBe(false);
  });

  it("the load-balanced district commits, drops the connection, and recognises the retry by webhook-id", async () => {
    const ev = event();
    await expect(send("cedarfalls", ev)).rejects.toThrow();
    const d = district("cedarfalls");
    expect(d.stats.droppedAfterCommit).toBe(1);
    const key = deliveryKey(d.info.subscriptionId, ev.id);
    expect(d.applied.get(key)?.n).toBe(1);
    const retry = await send("cedarfalls", ev);
    expect(retry.status).toBe(200);
    expect(JSON.parse(retry.text).status).toBe("duplicate");
    expect(d.applied.get(key)?.n).toBe(1);
    expect(d.stats.duplicatesIgnored).toBe(1);
  });

  it("the decommissioned endpoint answers 410 Gone", async () => {
    const r = await send("westfield", event());
    expect(r.status).toBe(410);
    expect(r.text).toMatch(/decommissioned/);
  });

  it("the careful district verifies signatures and applies each webhook-id once", async () => {
    const ev = event();
    const r = await send("oakridge", ev);
    expect(r.status, r.text).toBe(200);
    expect(JSON.parse(r.text).status).toBe("applied");
    const dup = await send("oakridge", ev);
    expect(JSON.parse(dup.text).status).toBe("duplicate");
    const bad = await send("oakridge", event(), { badSignature: true });
    expect(bad.status).toBe(401);
    const s = district("oakridge").status();
    expect(s.stats.signaturesVerified).toBe(2);
    expect(s.stats.signatureFailures).toBe(1);
    expect(s.maxAppliedPerKey).toBe(1);
  });

  it("each district has a status page and JSON showing what it received and applied", async () => {
    const d = district("oakridge");
    const page = await fetch(d.statusUrl).then((r) => r.text());
    expect(page).toContain("Oak Ridge School District");
    expect(page).toContain("applied twice: never");
    const json = await fetch(`${d.statusUrl}status`).then((r) => r.json());
    expect(json.stats.uniqueApplied).toBe(1);
    expect(json.recent[0].webhookId).toMatch(/^[0-9a-f]{64}$/);
  });

  it("a district's pages answer loopback names only: a rebound name (DNS rebinding) gets 421 and no student", async () => {
    const d = district("oakridge");
    const asHost = (host: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(`${d.statusUrl}status`, { headers: { host } }, (res) => {
          let body = "";
          res.on("data", (c) => (body += c));
          res.on("end", () => resolve({ status: res.statusCode!, body }));
        });
        req.on("error", reject);
        req.end();
      });
    const port = new URL(d.statusUrl).port;
    expect((await asHost(`127.0.0.1:${port}`)).status).toBe(200);
    expect((await asHost(`localhost:${port}`)).status).toBe(200);
    const rebound = await asHost(`rebind.evil.example:${port}`);
    expect(rebound.status).toBe(421);
    expect(rebound.body).not.toContain("stu_");
  });
});

describe("control page", () => {
  it("shows every district with its switch, and the JSON state", async () => {
    const page = await control("/");
    expect(page.status).toBe(200);
    for (const d of demo.districts) expect(page.text).toContain(d.info.name.replace(/&/g, "&amp;"));
    expect(page.text).toContain("Accept a missing term_id");
    // A grade Maple Grove will reject becomes a support ticket to try.
    for (let i = 0; i < 200 && demo.traffic.ticketable.length === 0; i++) await demo.traffic.publishOne("maplegrove");
    const t = demo.traffic.ticketable.at(-1)!;
    expect(t.hasTermId).toBe(false);
    const withTicket = await control("/");
    expect(withTicket.text).toContain("A ticket to answer");
    expect(withTicket.text).toContain(t.studentId);
    const state = await control("/api/state");
    expect(state.json.traffic.tickets[0].eventId).toBe(t.eventId);
    expect(state.json.districts).toHaveLength(7);
    expect(state.json.traffic.published).toBeGreaterThan(0);
  });

  it("flips switches by form post (303 back to the page) and refuses cross-origin posts", async () => {
    const form = await fetch(`${demo.controlUrl}/api/districts/westfield/fix`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "fixed=true",
      redirect: "manual",
    });
    expect(form.status).toBe(303);
    expect(district("westfield").fixed).toBe(true);
    const evil = await control("/api/districts/westfield/fix", { fixed: false }, { origin: "http://evil.example" });
    expect(evil.status).toBe(403);
    expect(district("westfield").fixed).toBe(true);
    expect((await control("/api/districts/nowhere/fix", {})).status).toBe(404);
    expect((await control("/api/districts/westfield/fix", { fixed: "yes" })).status).toBe(400);
    expect((await control("/api/traffic", { eventsPerSecond: -1 })).status).toBe(400);
    expect((await control("/api/traffic", { paused: true })).json.paused).toBe(true);
  });
});

describe("restart", () => {
  it("a second run on the same data keeps the subscriptions and what each district applied, and moves the URLs", async () => {
    const before = district("oakridge").status();
    const oldUrl = district("oakridge").url;
    await demo.stop();
    expect(fs.existsSync(path.join(stateDir, "districts.json"))).toBe(true);
    // The old ports are closed.
    await expect(fetch(oldUrl, { method: "POST", body: "{}" })).rejects.toThrow();
    demo = await startDemo({
      databaseUrl: db.url,
      dashboardUrl: "http://localhost:1",
      basePort: 0,
      stateDir,
      eventsPerSecond: 0,
      seedUser: false,
      waitForDashboard: false,
      log: () => {},
    });
    const after = district("oakridge");
    expect(after.stats.uniqueApplied).toBe(before.stats.uniqueApplied);
    expect(district("westfield").fixed).toBe(true);
    expect(await db.prisma.subscription.count({ where: { id: { startsWith: "sub_demo_" } } })).toBe(7);
    const sub = await db.prisma.subscription.findUniqueOrThrow({ where: { id: "sub_demo_oakridge" } });
    expect(sub.url).toBe(after.url);
    // What was applied before the restart is still recognised after it.
    const applied = [...after.applied.keys()][0];
    const row = after.applied.get(applied)!;
    const r = await send(
      "oakridge",
      { id: row.eventId, type: row.type, timestamp: new Date().toISOString(), data: { studentId: "stu_x", term_id: "fall-2026" } },
      { id: applied },
    );
    expect(JSON.parse(r.text).status).toBe("duplicate");
    expect(after.applied.get(applied)!.n).toBe(1);
  });
});

describe("the status line", () => {
  it("names each dead-letter reason once, summed over the districts, the largest first", () => {
    const rows = [
      { state: "dead_letter", reason: "exhausted", n: 3 },
      { state: "dead_letter", reason: "permanent", n: 12 },
      { state: "dead_letter", reason: "exhausted", n: 2 },
      { state: "delivered", reason: "", n: 40 },
      { state: "dead_letter", reason: "gone", n: 1 },
    ];
    expect(dlqReasons(rows)).toBe("permanent 12, exhausted 5, gone 1");
  });
});

import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { tokenFor } from "../helpers/api";
import { startApiServer, type TestServer } from "../helpers/client-server";
import { seedDeadLetters } from "../helpers/redrive-helpers";
import { HookledgerApiError, HookledgerClient, retryAfterMs } from "../../client/src/index";

let db: TestDb;
let server: TestServer;
let admin: HookledgerClient;
let producer: HookledgerClient;
let producerToken: string;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startApiServer();
  admin = new HookledgerClient({ baseUrl: server.url, token: await tokenFor(db.prisma, "admin") });
  producerToken = await tokenFor(db.prisma, "producer");
  producer = new HookledgerClient({ baseUrl: server.url, token: producerToken });
});
afterAll(async () => {
  await server?.close();
  await db?.close();
});

const graded = (id: string) => ({ id, type: "assignment.graded", data: { score: 88 }, subject: { tenant: "lincoln", studentId: "stu_9" } });

describe("HookledgerClient against the real route handlers over HTTP", () => {
  it("subscriptions: create, list, get, update, rotate", async () => {
    const created = await admin.subscriptions.create({
      id: "sub_lincoln",
      name: "Lincoln SIS",
      url: "https://lincoln.example.test/h",
      eventTypes: ["assignment.graded"],
      tenant: "lincoln",
    });
    expect(created.secret).toMatch(/^whsec_/);
    expect((await admin.subscriptions.list({ tenant: "lincoln" })).items.map((s) => s.id)).toEqual(["sub_lincoln"]);
    expect((await admin.subscriptions.get("sub_lincoln")).name).toBe("Lincoln SIS");
    const updated = await admin.subscriptions.update("sub_lincoln", { name: "Lincoln SIS v2" });
    expect(updated.name).toBe("Lincoln SIS v2");
    const rotated = await admin.subscriptions.rotate("sub_lincoln", { overlapSeconds: 60, reason: "test" });
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.previous).toHaveLength(1);
    expect((await admin.subscriptions.secrets("sub_lincoln")).items.length).toBe(2);
  });

  it("publish and publishBatch: created, duplicate, per-event errors", async () => {
    const first = await producer.publish(graded("cl_1"));
    expect(first).toMatchObject({ eventId: "cl_1", created: true });
    expect(first.deliveries).toHaveLength(1);
    const again = await producer.publish(graded("cl_1"));
    expect(again).toMatchObject({ eventId: "cl_1", created: false, deliveries: first.deliveries });
    const b = await producer.publishBatch([graded("cl_2"), { id: "cl_3", type: "assignment.graded" }, graded("cl_1")]);
    expect(b.results[0]).toMatchObject({ index: 0, status: "created" });
    expect(b.results[1]).toMatchObject({ index: 1, error: { code: "validation_failed" } });
    expect(b.results[2]).toMatchObject({ index: 2, status: "duplicate" });
  });

  it("deliveries: list, get, and redrive's refusal as a HookledgerApiError with the API's code and details", async () => {
    const list = await admin.deliveries.list({ subscriptionId: "sub_lincoln" });
    expect(list.items.length).toBe(2);
    const one = await admin.deliveries.get(list.items[0].id);
    expect(one.id).toBe(list.items[0].id);
    const err = await admin.deliveries.redrive(one.id, "INC-1").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HookledgerApiError);
    expect(err).toMatchObject({ status: 409, code: "conflict", details: { state: one.state } });
  });

  it("redrives: preview, create, get, cancel; a dead letter redriven alone", async () => {
    const [dl] = await seedDeadLetters(db, { subscriptionId: "sub_lincoln", n: 30, prefix: "cl_dl_" });
    const single = await admin.deliveries.redrive(dl, "INC-0");
    expect(single).toMatchObject({ id: dl, state: "pending", redrive: { action: "redrive" } });
    const preview = await admin.redrives.create({ filter: { subscriptionId: "sub_lincoln" }, dryRun: true });
    expect(preview).toMatchObject({ id: null, status: "preview" });
    expect(preview.matched).toBe(29);
    const batch = await admin.redrives.create({ filter: { subscriptionId: "sub_lincoln" }, reason: "INC-2", ratePerSecond: 1 });
    expect(batch.id).toBeTruthy();
    const got = await admin.redrives.get(batch.id!);
    expect(got.id).toBe(batch.id);
    expect((await admin.redrives.list()).items.map((x) => x.id)).toContain(batch.id);
    const cancelled = await admin.redrives.cancel(batch.id!, "test");
    expect(cancelled).toMatchObject({ id: batch.id, status: "cancelled" });
  });

  it("the rest of a delivery's life: resolve, the DLQ, resend, recover and backfill previews, test sends, ending a secret, archive, erasure", async () => {
    const [a, b] = await seedDeadLetters(db, {
      subscriptionId: "sub_lincoln",
      n: 3,
      prefix: "cl_life_",
      subject: (i) => ({ tenant: "lincoln", studentId: `stu_life_${i}` }),
    });
    const summary = await admin.dlq.summary({ subscriptionId: "sub_lincoln" });
    expect(summary.bySubscription.map((x) => x.subscriptionId)).toEqual(["sub_lincoln"]);
    expect((await admin.dlq.history({ hours: 1 })).points).toBeInstanceOf(Array);
    const resolved = await admin.deliveries.resolve(a, { resolution: "discarded", reason: "INC-7 importer rejects it" });
    expect(resolved).toMatchObject({ id: a, state: "resolved", resolution: { resolution: "discarded" } });
    expect((await admin.deliveries.get(a)).state).toBe("resolved");
    const preview = await admin.dlq.previewResolve({ filter: { subscriptionId: "sub_lincoln" }, resolution: "discarded", reason: "INC-8 bulk" });
    expect(preview).toMatchObject({ id: null, status: "preview" });
    expect(preview.matched).toBeGreaterThanOrEqual(2);
    const bulk = await admin.dlq.resolve({ filter: { subscriptionId: "sub_lincoln" }, resolution: "discarded", reason: "INC-8 bulk" });
    expect(bulk).toMatchObject({ status: "resolved" });
    expect((await admin.deliveries.get(b)).state).toBe("resolved");
    const resent = await admin.deliveries.resend(a, "INC-9 district lost it");
    expect(resent).toMatchObject({ id: a, state: "pending" });

    const since = new Date(Date.now() - 3_600_000).toISOString();
    const rec = await admin.subscriptions.previewRecover("sub_lincoln", { since, reason: "INC-10", ratePerSecond: 5 });
    expect(rec).toMatchObject({ id: null, status: "preview" });
    expect(rec.matched).toBeGreaterThan(0);
    const bf = await admin.subscriptions.previewBackfill("sub_lincoln", { since, reason: "ONBOARD-1", ratePerSecond: 5 });
    expect(bf).toMatchObject({ id: null, status: "preview" });
    await expect(admin.subscriptions.test("sub_lincoln", { eventId: "cl_no_such_event" })).rejects.toMatchObject({ status: 404, code: "not_found" });
    expect((await admin.subscriptions.testSends("sub_lincoln")).items).toEqual([]);

    const old = (await admin.subscriptions.secrets("sub_lincoln")).items.find((x) => x.expiresAt);
    expect(old).toBeTruthy();
    expect(await admin.subscriptions.endSecret("sub_lincoln", old!.id)).toMatchObject({ id: old!.id, active: false });

    const erasure = await admin.erasures.create({ subject: { studentId: "stu_life_2" }, reason: "records request 1", dryRun: true });
    expect(JSON.stringify(erasure)).not.toContain("stu_life_2");
    const archived = await admin.subscriptions.archive("sub_lincoln", "district left");
    expect(archived.archivedAt).toBeTruthy();
    expect(archived.superseded).toBeGreaterThan(0);
    await expect(admin.subscriptions.archive("sub_lincoln", "again")).rejects.toMatchObject({ status: 409 });
    await admin.subscriptions.unarchive("sub_lincoln", "district came back");
  });

  it("tenants and retention: register a district, read the policy, a dry run changes nothing", async () => {
    const t = await admin.tenants.create({ id: "cl_monroe", name: "Monroe USD" });
    expect(t).toMatchObject({ id: "cl_monroe", name: "Monroe USD" });
    expect((await admin.tenants.list()).items.map((x) => x.id)).toContain("cl_monroe");
    await expect(admin.tenants.create({ id: "cl_monroe", name: "again" })).rejects.toMatchObject({ status: 409 });
    const overview = await admin.retention.get();
    expect(overview.policy.retentionDays).toBeGreaterThan(0);
    const before = (await db.pool.query("SELECT count(*)::int AS n FROM deliveries")).rows[0].n;
    expect(await admin.retention.run({ dryRun: true })).toMatchObject({ id: null, status: "preview", dryRun: true });
    expect((await db.pool.query("SELECT count(*)::int AS n FROM deliveries")).rows[0].n).toBe(before);
  });

  it("validation and auth errors carry the code, status and details", async () => {
    const bad = await producer.publish({ id: "cl_bad", type: "assignment.graded" } as never).catch((e: unknown) => e);
    expect(bad).toMatchObject({ status: 400, code: "validation_failed" });
    expect((bad as HookledgerApiError).details).toEqual([expect.objectContaining({ path: "body.data" })]);
    const anon = new HookledgerClient({ baseUrl: server.url, token: "hl_nope" });
    await expect(anon.publish(graded("cl_anon"))).rejects.toMatchObject({ status: 401, code: "unauthorized" });
    await expect(producer.subscriptions.list()).rejects.toMatchObject({ status: 403, code: "forbidden" });
  });

  it("retries a 429 and a 503 honouring Retry-After, then gives up after maxRetries", async () => {
    server.inject("/api/v1/events", [{ status: 429, retryAfter: "1" }, { status: 503 }]);
    const began = Date.now();
    const r = await producer.publish(graded("cl_retry"));
    expect(r.created).toBe(true);
    expect(Date.now() - began).toBeGreaterThanOrEqual(1000);

    const impatient = new HookledgerClient({ baseUrl: server.url, token: producerToken, maxRetries: 2, maxRetryDelayMs: 50 });
    server.inject("/api/v1/events", [
      { status: 429, retryAfter: "3600" },
      { status: 429, retryAfter: "3600" },
      { status: 429, retryAfter: "3600" },
    ]);
    const t0 = Date.now();
    await expect(impatient.publish(graded("cl_never"))).rejects.toMatchObject({ status: 429, code: "rate_limited" });
    expect(Date.now() - t0).toBeLessThan(2000); // the one-hour Retry-After is capped by maxRetryDelayMs
    const n = await db.pool.query("SELECT count(*)::int AS n FROM events WHERE id = 'cl_never'");
    expect(n.rows[0].n).toBe(0);
  });

  it("parses Retry-After as seconds or an HTTP date", () => {
    expect(retryAfterMs("2")).toBe(2000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(retryAfterMs("soon")).toBeUndefined();
    expect(retryAfterMs(null)).toBeUndefined();
  });

  it("is importable as hookledger/client by a separate Node process (examples/publish.ts)", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ["bin/run-ts.mjs", "examples/publish.ts"], {
      env: { ...process.env, HOOKLEDGER_URL: server.url, HOOKLEDGER_TOKEN: producerToken, EXAMPLE_PREFIX: "cl_ex" },
      timeout: 60_000,
    });
    expect(stdout).toContain("published cl_ex_1: created, 1 delivery\n");
    expect(stdout).toContain("#0 cl_ex_2: created");
    expect(stdout).toContain("#1 failed: validation_failed");
    // A producer's own refusal (not a 403 for reading subscriptions, which a producer never does).
    expect(stdout).toMatch(/^refused 409 event_conflict: /m);
  });

  it("asks for the batch answer uncompressed, and leaves the other answers' encoding to fetch", async () => {
    const sent: { path: string; encoding: string | null }[] = [];
    const recording = new HookledgerClient({
      baseUrl: server.url,
      token: producerToken,
      fetch: (async (url: string | URL | Request, init?: RequestInit) => {
        const u = new URL(String(url));
        sent.push({ path: u.pathname + u.search, encoding: new Headers(init?.headers).get("accept-encoding") });
        return fetch(url, init);
      }) as typeof fetch,
    });
    expect((await recording.publishBatch([graded("cl_enc_1")])).results[0]).toMatchObject({ status: "created" });
    await recording.publish(graded("cl_enc_2"));
    const counted = await recording.publishBatch([graded("cl_enc_3"), graded("cl_enc_1")], { deliveries: false });
    expect(counted.results).toEqual([
      { index: 0, id: "cl_enc_3", status: "created" },
      { index: 1, id: "cl_enc_1", status: "duplicate" },
    ]);
    expect(sent).toEqual([
      { path: "/api/v1/events/batch", encoding: "identity" },
      { path: "/api/v1/events", encoding: null },
      { path: "/api/v1/events/batch?deliveries=false", encoding: "identity" },
    ]);
  });
});

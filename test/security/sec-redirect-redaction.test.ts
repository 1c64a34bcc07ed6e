// A 3xx whose Location echoes the endpoint's credential (an SSO redirect that
// copies the token into the query, a misconfigured gateway) is stored as the
// error "Redirect to <Location> not followed.": the same redaction as the
// answer's body and headers must run over it, for test sends and for worker
// attempts, so the credential never lands where support can read it.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { attemptsOf, deliveryOf, seedEvents, startReceiver, waitFor, worker, type Receiver } from "../helpers/worker-helpers";
import { dumpDatabase } from "../helpers/endpoint-auth-helpers";
import * as subs from "../../app/api/v1/subscriptions/route";
import * as testRoute from "../../app/api/v1/subscriptions/[id]/test/route";
import type { DeliveryWorker } from "../../worker/worker";

const TOKEN = `tok_${randomBytes(12).toString("hex")}`;
const KEY = `dk_${randomBytes(12).toString("hex")}`;

let db: TestDb;
let manager: string;
let receiver: Receiver;
let w: DeliveryWorker | undefined;

beforeAll(async () => {
  process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS = "1";
  db = await createTestDatabase();
  manager = await tokenFor(db.prisma, "manager");
  // A manager names an existing district (a tenant-less subscription is an admin's).
  await db.prisma.tenant.create({ data: { id: "lincoln", name: "Lincoln USD" } });
  receiver = await startReceiver((req, res) => {
    // Echo both credentials into the redirect target, as a careless gateway might.
    res.writeHead(302, {
      location: `https://sso.district.example/login?auth=${encodeURI(String(req.headers.authorization))}&key=${req.headers["x-district-key"]}&t=${TOKEN}`,
    });
    res.end();
  });
  const r = await call(subs.POST, {
    token: manager,
    body: {
      id: "sub_redirect",
      name: "Redirecting gateway",
      url: receiver.url,
      eventTypes: ["assignment.graded"],
      tenant: "lincoln",
      retryPolicy: { ladderSeconds: [3600] },
      headers: { Authorization: `Bearer ${TOKEN}`, "X-District-Key": KEY },
    },
  });
  expect(r.status, r.text).toBe(201);
});

afterAll(async () => {
  await w?.stop();
  await receiver?.close();
  await db?.close();
});

describe("a redirect's Location is redacted in the stored error", () => {
  it("test send: the answer and the test_sends row say where it redirected, with the credentials masked", async () => {
    const r = await call(testRoute.POST, { token: manager, params: { id: "sub_redirect" }, body: {} });
    expect(r.status, r.text).toBe(200);
    expect(r.json.status).toBe(302);
    expect(r.json.error).toMatch(/^Redirect to https:\/\/sso\.district\.example\/login\?auth=.*•••• not followed\.$/);
    expect(r.text).not.toContain(TOKEN);
    expect(r.text).not.toContain(KEY);
    const { rows } = await db.pool.query(`SELECT error_message FROM test_sends WHERE subscription_id = 'sub_redirect'`);
    expect(rows).toHaveLength(1);
    expect(rows[0].error_message).toContain("••••");
    expect(rows[0].error_message).not.toContain(TOKEN);
    expect(rows[0].error_message).not.toContain(KEY);
  });

  it("worker attempt: the attempt's and the delivery's error are masked, and no copy is anywhere in the database", async () => {
    w = worker(db.url);
    await seedEvents(db.pool, "evt_redir_", 1, ["sub_redirect"], "lincoln");
    const d = await waitFor(async () => {
      const x = await deliveryOf(db.pool, "sub_redirect", "evt_redir_1");
      return x && x.attempt_count > 0 ? x : null;
    });
    const [attempt] = await attemptsOf(db.pool, d.id);
    expect(attempt.status_code).toBe(302);
    expect(attempt.error_message).toMatch(/^Redirect to https:\/\/sso\.district\.example\/login\?auth=.*•••• not followed\.$/);
    expect(attempt.error_message).not.toContain(TOKEN);
    expect(attempt.error_message).not.toContain(KEY);
    const dump = await dumpDatabase(db.pool);
    expect(dump).toContain("sso.district.example");
    expect(dump).not.toContain(TOKEN);
    expect(dump).not.toContain(KEY);
  });
});

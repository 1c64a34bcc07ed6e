// Secret rotation through the real route handlers: a manager rotates (the new
// secret answered once), both secrets stay active for the overlap, the
// operational event hookledger.subscription.secret_rotated reaches a
// subscription that names it (ids and times, never a secret), and an admin
// ends the overlap early; every refusal writes nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, tableCounts, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import * as secretsRoute from "../../app/api/v1/subscriptions/[id]/secrets/route";
import * as secretRoute from "../../app/api/v1/subscriptions/[id]/secrets/[secretId]/route";
import { createSubscription } from "../../lib/subscriptions/manage-subscriptions";
import { SECRET_ROTATED_EVENT } from "../../lib/subscriptions/rotation";
import { SYSTEM } from "../../lib/auth/principal";

let db: TestDb;
let manager: string;
let admin: string;

beforeAll(async () => {
  db = await createTestDatabase();
  manager = await tokenFor(db.prisma, "manager");
  admin = await tokenFor(db.prisma, "admin");
  await createSubscription(
    db.prisma,
    { id: "sub_rot", name: "Lincoln SIS", tenant: "lincoln", url: "https://lincoln.example.test/hooks", eventTypes: ["assignment.graded"] },
    SYSTEM,
  );
  await createSubscription(db.prisma, { id: "sub_oncall", name: "On-call", url: "https://chat.example.test/hook", eventTypes: [SECRET_ROTATED_EVENT] }, SYSTEM);
  await createSubscription(db.prisma, { id: "sub_all", name: "Everything", url: "https://all.example.test/hook", eventTypes: ["*"] }, SYSTEM);
});
afterAll(async () => db?.close());

const list = async () =>
  (await call(secretsRoute.GET, { token: manager, params: { id: "sub_rot" } })).json.items as {
    id: string;
    createdAt: string;
    expiresAt: string | null;
    active: boolean;
  }[];
const end = (secretId: string, token = admin) => call(secretRoute.DELETE, { method: "DELETE", token, params: { id: "sub_rot", secretId } });

describe("rotation", () => {
  it("a manager rotates: the new secret once, both active during the overlap, audited, and the operational event published without the secret", async () => {
    const [original] = await list();
    const r = await call(secretsRoute.POST, { token: manager, params: { id: "sub_rot" }, body: { overlapSeconds: 3600 } });
    expect(r.status, r.text).toBe(201);
    expect(r.json.secret).toMatch(/^whsec_/);
    expect(r.headers.get("cache-control")).toBe("no-store");
    const secrets = await list();
    expect(secrets.map((s) => s.id)).toEqual([r.json.id, original.id]);
    expect(secrets.every((s) => s.active)).toBe(true);
    expect(secrets[0].expiresAt).toBeNull();
    const expires = new Date(secrets[1].expiresAt!).getTime();
    expect(Math.abs(expires - (Date.now() + 3600_000))).toBeLessThan(60_000);
    expect(JSON.stringify(secrets)).not.toContain("whsec_");

    const ev = await db.pool.query(
      `SELECT e.payload, array_agg(d.subscription_id ORDER BY d.subscription_id) AS subs FROM events e JOIN deliveries d ON d.event_id = e.id WHERE e.type = $1 GROUP BY e.id, e.payload`,
      [SECRET_ROTATED_EVENT],
    );
    expect(ev.rows).toHaveLength(1);
    // The on-call subscription named the type; "*" does not match operational events.
    expect(ev.rows[0].subs).toEqual(["sub_oncall"]);
    const body = JSON.parse(ev.rows[0].payload.toString("utf8"));
    expect(body).toMatchObject({
      type: SECRET_ROTATED_EVENT,
      data: { subscriptionId: "sub_rot", subscriptionName: "Lincoln SIS", secretId: r.json.id, overlapSeconds: 3600, previous: [{ id: original.id }] },
    });
    expect(ev.rows[0].payload.toString("utf8")).not.toContain(r.json.secret);
    const audit = await db.pool.query("SELECT actor, details FROM audit_entries WHERE action = 'subscription.secret.rotate' AND target_id = 'sub_rot'");
    expect(audit.rows).toEqual([{ actor: "token:test-manager", details: expect.objectContaining({ secretId: r.json.id, overlapSeconds: 3600 }) }]);
  });

  it("an admin ends the overlap early; a manager may not, the newest secret cannot be ended, and an ended one is a 409; refusals write nothing", async () => {
    const [newest, old] = await list();
    const before = await tableCounts(db.pool);
    expect((await end(old.id, manager)).status).toBe(403);
    const newestRefused = await end(newest.id);
    expect(newestRefused.status).toBe(409);
    expect(newestRefused.json.error.message).toMatch(/newest/);
    expect((await end("sec_nope")).status).toBe(404);
    expect(await tableCounts(db.pool)).toEqual(before);

    const r = await end(old.id);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ id: old.id, active: false });
    const after = await list();
    expect(after.find((s) => s.id === old.id)!.active).toBe(false);
    expect(after.find((s) => s.id === newest.id)!.active).toBe(true);
    // What the worker signs with: only the newest now.
    const signing = await db.pool.query("SELECT id FROM subscription_secrets WHERE subscription_id = 'sub_rot' AND (expires_at IS NULL OR expires_at > now())");
    expect(signing.rows.map((x) => x.id)).toEqual([newest.id]);
    const audit = await db.pool.query("SELECT actor, details FROM audit_entries WHERE action = 'subscription.secret.expire'");
    expect(audit.rows).toEqual([{ actor: "token:test-admin", details: expect.objectContaining({ secretId: old.id, expiresAtBefore: old.expiresAt }) }]);

    const counts = await tableCounts(db.pool);
    expect((await end(old.id)).status).toBe(409);
    expect(await tableCounts(db.pool)).toEqual(counts);
  });
});

// Back-to-back rotations with long overlaps must not pile up signing secrets
// (the worker computes one HMAC per unexpired secret on every send): at most
// 5 sign at once, and a rotation past the cap ends the oldest
// overlap now, audited as an early end.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import * as secretsRoute from "../../app/api/v1/subscriptions/[id]/secrets/route";
import { createSubscription } from "../../lib/subscriptions/manage-subscriptions";
import { SYSTEM } from "../../lib/auth/principal";

let db: TestDb;
let manager: string;
beforeAll(async () => {
  db = await createTestDatabase();
  manager = await tokenFor(db.prisma, "manager");
  await createSubscription(db.prisma, { id: "sub_cap", name: "Cap", url: "https://cap.example.test/hooks", eventTypes: ["assignment.graded"] }, SYSTEM);
});
afterAll(async () => db?.close());

/** Secrets that sign now, as the database holds them (independent of the API's view). */
async function signing(): Promise<string[]> {
  const r = await db.pool.query(
    `SELECT id FROM subscription_secrets WHERE subscription_id = 'sub_cap' AND (expires_at IS NULL OR expires_at > now()) ORDER BY created_at, id`,
  );
  return r.rows.map((x) => x.id as string);
}

describe("at most 5 signing secrets", () => {
  it("8 rotations with 7-day overlaps leave 5 signing: each rotation past the cap ends the oldest overlap now, audited", async () => {
    const [original] = await signing();
    const created: string[] = [original];
    for (let i = 0; i < 8; i++) {
      const r = await call(secretsRoute.POST, { token: manager, params: { id: "sub_cap" }, body: { overlapSeconds: 7 * 86400 } });
      expect(r.status, r.text).toBe(201);
      created.push(r.json.id);
      const now = await signing();
      expect(now.length).toBe(Math.min(created.length, 5));
      // The newest five, oldest ended first.
      expect(now).toEqual(created.slice(-5));
    }
    const listed = (await call(secretsRoute.GET, { token: manager, params: { id: "sub_cap" } })).json.items as { id: string; active: boolean }[];
    expect(listed.filter((s) => s.active).map((s) => s.id)).toEqual(created.slice(-5).reverse());

    const ended = await db.pool.query(`SELECT reason, details FROM audit_entries WHERE action = 'subscription.secret.expire' AND target_id = 'sub_cap' ORDER BY id`);
    // Rotations 5..8 each ended one: the original and the first three rotations' secrets.
    expect(ended.rows.map((r) => r.details.secretId)).toEqual(created.slice(0, 4));
    for (const [i, r] of ended.rows.entries()) {
      expect(r.details.cause).toBe("max_active_secrets");
      expect(r.details.rotation).toBe(created[i + 5]);
      expect(r.reason).toMatch(/limit of 5 signing secrets/);
    }
    const rotations = await db.pool.query(`SELECT details FROM audit_entries WHERE action = 'subscription.secret.rotate' AND target_id = 'sub_cap' ORDER BY id`);
    expect(rotations.rows.map((r) => r.details.endedEarly ?? [])).toEqual([[], [], [], [], [created[0]], [created[1]], [created[2]], [created[3]]]);
  });
});

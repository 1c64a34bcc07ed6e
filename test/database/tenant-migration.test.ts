// Migration 0020 (tenants) applied over a database that already holds
// subscriptions with and without a tenant, users, tokens, deliveries and audit
// rows: every row is kept as it was, each distinct tenant string becomes a
// tenants row, every account and token stays global, and the audit rows of a
// tenant's subscription (target or details.subscriptionId) carry its tenant.
import { describe, expect, it } from "vitest";
import { asBefore, databaseBefore } from "../helpers/migration-db";

describe("migration 0020 on a database that already holds rows", () => {
  it("keeps every row, makes tenants of the tenant strings and tags the audit trail", async () => {
    const mdb = await databaseBefore("0020");
    const c = mdb.client;
    try {
      await c.query(
        `INSERT INTO subscriptions (id, name, tenant, url, event_types) VALUES
           ('sub_l1', 'l1', 'lincoln', 'https://l.example.test/h', '{assignment.graded}'),
           ('sub_l2', 'l2', 'lincoln', 'https://l.example.test/h2', '{*}'),
           ('sub_j', 'j', 'jefferson', 'https://j.example.test/h', '{assignment.graded}'),
           ('sub_g', 'g', NULL, 'https://g.example.test/h', '{*}')`,
      );
      await c.query(
        `INSERT INTO events (id, type, payload, occurred_at, tenant) SELECT 'evt_' || i, 'assignment.graded', '\\x7b7d', now(),
           (ARRAY['lincoln', 'jefferson', 'nobody'])[i % 3 + 1] FROM generate_series(1, 30) i`,
      );
      await c.query(
        `INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type)
         SELECT hl_delivery_key(s, 'evt_' || i), 'evt_' || i, s, 'assignment.graded'
           FROM generate_series(1, 30) i, unnest(ARRAY['sub_l1', 'sub_j', 'sub_g']) s`,
      );
      await c.query(`INSERT INTO users (id, email, role, password_hash) VALUES ('usr_1', 'a@example.test', 'admin', 'x')`);
      await c.query(`INSERT INTO api_tokens (id, name, role, token_hash) VALUES ('tok_1', 'p', 'producer', 'h1')`);
      await c.query(
        `INSERT INTO audit_entries (actor, action, target_type, target_id, details) VALUES
           ('user:a', 'subscription.pause', 'subscription', 'sub_l1', '{"from":"active","to":"paused"}'),
           ('user:a', 'subscription.pause', 'subscription', 'sub_g', '{"from":"active","to":"paused"}'),
           ('user:a', 'delivery.redrive', 'delivery', 'dlv_x', '{"subscriptionId":"sub_j"}'),
           ('user:a', 'user.create', 'user', 'usr_1', '{"email":"a@example.test","role":"admin"}')`,
      );
      const snapshot = async () => ({
        subscriptions: (await c.query("SELECT * FROM subscriptions ORDER BY id")).rows,
        events: (await c.query("SELECT * FROM events ORDER BY id")).rows,
        // Every column as it was; event_at is the one 0029 adds (checked below: the event's created_at).
        deliveries: (await c.query("SELECT * FROM deliveries ORDER BY id")).rows.map((d) => Object.fromEntries(Object.entries(d).filter(([k]) => k !== "event_at"))),
        users: (await c.query("SELECT id, email, role FROM users ORDER BY id")).rows,
        tokens: (await c.query("SELECT id, name, role FROM api_tokens ORDER BY id")).rows,
        audit: (await c.query("SELECT id, actor, action, target_type, target_id, details FROM audit_entries ORDER BY id")).rows,
      });
      const before = await snapshot();
      expect(await mdb.applyRest()).toEqual(mdb.rest);
      const after = await snapshot();
      expect({ ...after, subscriptions: asBefore(before.subscriptions, after.subscriptions) }).toEqual(before);
      // 0029 gave each delivery its event's created_at (event_keys) as event_at.
      expect((await c.query("SELECT count(*)::int AS n FROM deliveries d JOIN event_keys k ON k.id = d.event_id AND k.created_at = d.event_at")).rows[0].n).toBe(
        before.deliveries.length,
      );

      expect((await c.query("SELECT id, name FROM tenants ORDER BY id")).rows).toEqual([
        { id: "jefferson", name: "jefferson" },
        { id: "lincoln", name: "lincoln" },
      ]);
      expect((await c.query("SELECT count(*)::int AS n FROM users WHERE tenant_id IS NOT NULL")).rows[0].n).toBe(0);
      expect((await c.query("SELECT count(*)::int AS n FROM api_tokens WHERE tenant_id IS NOT NULL")).rows[0].n).toBe(0);
      expect((await c.query("SELECT target_id, tenant_id FROM audit_entries ORDER BY id")).rows).toEqual([
        { target_id: "sub_l1", tenant_id: "lincoln" },
        { target_id: "sub_g", tenant_id: null },
        { target_id: "dlv_x", tenant_id: "jefferson" },
        { target_id: "usr_1", tenant_id: null },
      ]);

      // The references hold from now on: a subscription written with a new tenant registers it; a user or token
      // naming an unknown tenant is refused.
      await c.query("UPDATE subscriptions SET tenant = 'roosevelt' WHERE id = 'sub_j'");
      await c.query("INSERT INTO subscriptions (id, name, tenant, url, event_types) VALUES ('sub_t', 't', 'taft', 'https://t.example.test/h', '{a.b}')");
      expect((await c.query("SELECT id FROM tenants ORDER BY id")).rows.map((r) => r.id)).toEqual(["jefferson", "lincoln", "roosevelt", "taft"]);
      await expect(c.query("DELETE FROM tenants WHERE id = 'taft'")).rejects.toThrow(/foreign key/);
      await expect(c.query("UPDATE users SET tenant_id = 'nowhere'")).rejects.toThrow(/foreign key/);
      await expect(c.query("UPDATE api_tokens SET tenant_id = 'nowhere'")).rejects.toThrow(/foreign key/);
      await c.query("UPDATE users SET tenant_id = 'lincoln'");
      // A new audit row of a tenant's subscription is tagged by the trigger; one that says its tenant keeps it.
      await c.query(`INSERT INTO audit_entries (actor, action, target_type, target_id, details) VALUES ('s', 'subscription.disable', 'subscription', 'sub_l2', '{}')`);
      await c.query(`INSERT INTO audit_entries (actor, action, target_type, target_id, details, tenant_id) VALUES ('s', 'dlq.resolve', 'dlq', 'x', '{}', 'jefferson')`);
      expect((await c.query("SELECT tenant_id FROM audit_entries ORDER BY id DESC LIMIT 2")).rows.map((r) => r.tenant_id)).toEqual(["jefferson", "lincoln"]);
    } finally {
      await mdb.close();
    }
  });
});

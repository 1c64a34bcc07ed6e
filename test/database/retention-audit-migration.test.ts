// Migration 0047 on an audit trail that already holds retention overrides
// written without a tenant: each is given the tenant it was for (its target
// id), and no other row changes.
import { afterAll, describe, expect, it } from "vitest";
import { databaseBefore, type MigrationDb } from "../helpers/migration-db";

let mdb: MigrationDb | undefined;

afterAll(async () => {
  await mdb?.close();
});

describe("migration 0047_retention_policy_audit_tenant", () => {
  it("names each retention override's tenant and leaves every other row as it was", async () => {
    mdb = await databaseBefore("0047");
    const c = mdb.client;
    await c.query(
      `INSERT INTO audit_entries (actor, action, target_type, target_id, details, tenant_id) VALUES
         ('token:admin', 'retention.policy', 'retention', 'jefferson', '{"before":null,"after":{"retentionDays":200,"payloadRetentionDays":null}}', NULL),
         ('token:admin', 'retention.policy', 'retention', 'lincoln', '{"before":{"retentionDays":90,"payloadRetentionDays":30},"after":null}', NULL),
         ('token:admin', 'retention.run', 'retention', '7', '{}', NULL),
         ('token:admin', 'event_type.create', 'event_type', 'assignment.graded', '{}', NULL),
         ('user:a@d.test', 'subscription.pause', 'subscription', 'sub_1', '{}', 'lincoln')`,
    );
    const rows = async () => (await c.query(`SELECT id::int, actor, action, target_type, target_id, details, created_at, tenant_id FROM audit_entries ORDER BY id`)).rows;
    const before = await rows();

    expect(await mdb.applyRest()).toContain(mdb.rest[0]);
    const after = await rows();
    expect(after.map((r) => r.tenant_id)).toEqual(["jefferson", "lincoln", null, null, "lincoln"]);
    expect(after.map(({ tenant_id: _, ...r }) => r)).toEqual(before.map(({ tenant_id: _, ...r }) => r));
  });
});

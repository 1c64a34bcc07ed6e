// Migration 0048 on notices already recorded (sent, failed, suppressed, a
// pending digest): every row keeps its values, and the new checks hold a notice
// to nobody to the 'unaddressed' status and the reverse.
import { afterAll, describe, expect, it } from "vitest";
import { databaseBefore, tableRows, type MigrationDb } from "../helpers/migration-db";

let mdb: MigrationDb | undefined;

afterAll(async () => {
  await mdb?.close();
});

describe("migration 0048_notice_without_contacts", () => {
  it("keeps every notice, accepts one to nobody only as unaddressed, and refuses the mixes", async () => {
    mdb = await databaseBefore("0048");
    const c = mdb.client;
    await c.query("INSERT INTO tenants (id, name) VALUES ('lincoln', 'Lincoln USD')");
    await c.query(
      `INSERT INTO notifications (id, tenant, subscription_id, kind, channel, recipient, subject, body, source, status, attempts, next_attempt_at, last_error, sent_at, digest_of, digest_count)
       SELECT 'ntf_' || g, 'lincoln', 'sub_' || (g % 7), (ARRAY['paused','disabled','recovered','dlq_threshold','dlq_old','secret_expiring'])[1 + g % 6],
              CASE WHEN g % 2 = 0 THEN 'email' ELSE 'webhook' END, 'it' || g || '@lincoln.example', 'subject ' || g, 'body ' || g, 'src:' || g,
              (ARRAY['pending','sent','failed','suppressed'])[1 + g % 4], g % 5, CASE WHEN g % 4 = 0 THEN now() END,
              CASE WHEN g % 4 = 2 THEN 'refused' END, CASE WHEN g % 4 = 1 THEN now() END, NULL, 0
         FROM generate_series(1, 400) g`,
    );
    const rows = () => tableRows(c, "notifications", ["id"]);
    const before = await rows();
    expect(before).toHaveLength(400);

    expect(await mdb.applyRest()).toContain(mdb.rest[0]);
    expect(await rows()).toEqual(before);

    const insert = (channel: string, status: string) =>
      c.query(
        `INSERT INTO notifications (id, tenant, kind, channel, recipient, subject, body, source, status, next_attempt_at)
         VALUES (hl_new_id('ntf_'), 'lincoln', 'paused', $1, '', 's', 'b', hl_new_id('src_'), $2, now())`,
        [channel, status],
      );
    await insert("none", "unaddressed");
    await expect(insert("none", "pending")).rejects.toThrow(/notifications_unaddressed/);
    await expect(insert("email", "unaddressed")).rejects.toThrow(/notifications_unaddressed/);
    await expect(insert("sms", "pending")).rejects.toThrow(/notifications_channel_check/);
  });
});

// Migration 0052 on a ledger that already holds events and their keys: every row is kept, and the trigger that gives
// keys to events written other than by the enqueue runs with sequential scans off, so it probes event_keys by its
// primary key whatever the statistics were when a connection planned it (test/events/event-keys-trigger.test.ts).
import { afterAll, expect, it } from "vitest";
import { databaseBefore, tableRows, type MigrationDb } from "../helpers/migration-db";

let mdb: MigrationDb | undefined;
afterAll(async () => {
  await mdb?.close();
});

it("migration 0052_event_keys_probe_plan keeps every event and key", async () => {
  mdb = await databaseBefore("0052");
  const c = mdb.client;
  await c.query(
    `INSERT INTO events (id, type, payload, occurred_at, subject, subject_values)
     SELECT 'evt_m_' || g, 'assignment.graded', convert_to('{}', 'UTF8'), now() - make_interval(days => g % 60), jsonb_build_object('studentId', 'stu_' || g),
            ARRAY['stu_' || g]
       FROM generate_series(1, 500) g`,
  );
  const events = await tableRows(c, "events", ["id"]);
  const keys = await tableRows(c, "event_keys", ["id"]);
  expect(keys).toHaveLength(500);
  expect(mdb.rest[0]).toBe("0052_event_keys_probe_plan");
  expect(await mdb.applyRest()).toEqual(mdb.rest);
  expect(await tableRows(c, "events", ["id"])).toEqual(events);
  expect(await tableRows(c, "event_keys", ["id"])).toEqual(keys);
  const { rows } = await c.query<{ config: string[] }>("SELECT proconfig AS config FROM pg_proc WHERE proname = 'hl_event_keys_from_events'");
  expect(rows[0].config).toEqual(["enable_seqscan=off"]);
});

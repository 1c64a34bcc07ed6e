// The statement trigger that gives keys to events written other than by the
// enqueue (migration 0021, hl_event_keys_from_events) runs after every insert
// into events, the enqueue's included. It must read event_keys by index, a few
// entries per event written: planned as an anti-join it read the whole table
// on every enqueue statement, so the ingest slowed down as the ledger grew
// (migration 0026; BENCHMARKS.md F8). And it must do so on a connection that
// first planned it while event_keys was analyzed as empty: PL/pgSQL keeps that
// plan, which read the table whole once per event written, until an ANALYZE
// (migration 0052).
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { createSub } from "../helpers/worker-helpers";
import { enqueueEvents } from "../../lib/ledger/sql/enqueue";
import { eventRow } from "../../lib/events/publish";

const KEYS_ALREADY_THERE = 20_000;

let db: TestDb;
beforeAll(async () => {
  db = await createTestDatabase();
  await createSub(db.pool, { id: "sub_keys", url: "http://127.0.0.1:9/hooks" });
  await db.pool.query(`INSERT INTO event_keys (id, created_at) SELECT 'evt_old_' || g, now() - interval '1 day' FROM generate_series(1, $1::int) g`, [
    KEYS_ALREADY_THERE,
  ]);
  await db.pool.query("ANALYZE event_keys");
});
afterAll(async () => db?.close());

const rows = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => eventRow({ id: `${prefix}${i}`, type: "assignment.graded", data: { i }, subject: { tenant: "lincoln", studentId: `stu_${i}` } }));

/** Rows of event_keys read in the current transaction: by sequential scans, and through any of its indexes. */
async function keysRead(c: pg.PoolClient): Promise<number> {
  const { rows: r } = await c.query<{ n: number }>(
    `SELECT (pg_stat_get_xact_tuples_returned('event_keys'::regclass)
             + coalesce((SELECT sum(pg_stat_get_xact_tuples_returned(indexrelid)) FROM pg_index WHERE indrelid = 'event_keys'::regclass), 0))::int AS n`,
  );
  return r[0].n;
}

describe("the event keys' trigger", () => {
  it("an enqueue of 500 events reads event_keys in proportion to the events, not to the table", async () => {
    const c = await db.pool.connect();
    try {
      await c.query("BEGIN");
      const before = await keysRead(c);
      const out = await enqueueEvents(c, rows("evt_new_", 500));
      expect(out.size).toBe(500);
      const read = (await keysRead(c)) - before;
      // About one index entry per event (the trigger finds each key the enqueue wrote); a scan reads all 20,500.
      expect(read).toBeGreaterThanOrEqual(500);
      expect(read).toBeLessThan(2 * 500);
      await c.query("COMMIT");
    } finally {
      c.release();
    }
  });

  it("still gives keys to events written directly, and refuses an id already stored under another time", async () => {
    await db.pool.query(
      `INSERT INTO events (id, type, payload, occurred_at) SELECT 'evt_direct_' || g, 'assignment.graded', '\\x7b7d', now() FROM generate_series(1, 300) g`,
    );
    const { rows: k } = await db.pool.query("SELECT count(*)::int AS n FROM event_keys WHERE id LIKE 'evt_direct_%'");
    expect(k[0].n).toBe(300);
    await expect(db.pool.query(`INSERT INTO events (id, type, payload, occurred_at) VALUES ('evt_old_7', 'assignment.graded', '\\x7b7d', now())`)).rejects.toThrow(
      /event_keys_pkey/,
    );
    const { rows: e } = await db.pool.query("SELECT count(*)::int AS n FROM events WHERE id = 'evt_old_7'");
    expect(e[0].n).toBe(0);
  });

  it("reads event_keys by index on a connection that planned it when the table was empty, however large it is now", async () => {
    // A database of its own, whose event_keys starts empty (the last test here: it becomes the process's database).
    const fresh = await createTestDatabase();
    const c = new pg.Client({ connectionString: fresh.url });
    try {
      // No autovacuum on the table: its ANALYZE would make every connection plan again, hiding a kept plan.
      await fresh.pool.query("ALTER TABLE event_keys SET (autovacuum_enabled = off)");
      await fresh.pool.query("VACUUM ANALYZE event_keys");
      await c.connect();
      // This connection's first event: the trigger's INSERT is planned now, with event_keys analyzed as empty.
      await c.query(`INSERT INTO events (id, type, payload, occurred_at) VALUES ('evt_first', 'assignment.graded', '\\x7b7d', now())`);
      // The table grows on another connection, with no ANALYZE after.
      await fresh.pool.query(`INSERT INTO event_keys (id, created_at) SELECT 'evt_other_' || g, now() FROM generate_series(1, $1::int) g`, [KEYS_ALREADY_THERE]);
      await c.query("BEGIN");
      await c.query(`INSERT INTO events (id, type, payload, occurred_at) SELECT 'evt_later_' || g, 'assignment.graded', '\\x7b7d', now() FROM generate_series(1, 50) g`);
      // This backend's scans of event_keys in this transaction: one probe per event, no sequential scan (before: 51).
      const { rows: scans } = await c.query<{ seq_scan: number; idx_scan: number }>(
        "SELECT seq_scan::int, idx_scan::int FROM pg_stat_xact_user_tables WHERE relname = 'event_keys'",
      );
      await c.query("COMMIT");
      expect(scans[0]).toMatchObject({ seq_scan: 0 });
      expect(scans[0].idx_scan).toBeGreaterThanOrEqual(50);
      const { rows: k } = await fresh.pool.query("SELECT count(*)::int AS n FROM event_keys WHERE id LIKE 'evt\\_later\\_%'");
      expect(k[0].n).toBe(50);
    } finally {
      await c.end().catch(() => {});
      await fresh.close();
    }
  });
});

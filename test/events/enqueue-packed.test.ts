// The enqueue sends the events' payloads end to end in one binary parameter
// and their content hashes in another (lib/ledger/sql/enqueue.ts, migration
// 0033). Each event must get back exactly its own bytes: an offset one off
// would shift every payload after it into its neighbour's.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { enqueueEvents, type EventRow } from "../../lib/ledger/sql/enqueue";

let db: TestDb;
beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query("INSERT INTO subscriptions (id, name, url, event_types) VALUES ('sub_p', 'p', 'https://p.example.test/h', '{*}')");
});
afterAll(async () => db?.close());

const row = (id: string, payload: Buffer, contentHash: Buffer | null, subjectValues: string[] = []): EventRow => ({
  id,
  type: "assignment.graded",
  payload,
  occurredAt: new Date(),
  tenant: null,
  subject: "{}",
  subjectValues,
  contentHash,
});

const hash = (s: string) => createHash("sha256").update(s).digest();

async function stored(ids: string[]) {
  const { rows } = await db.pool.query<{ id: string; payload: Buffer; content_hash: Buffer | null; subject_values: string[] }>(
    "SELECT id, payload, content_hash, subject_values FROM events WHERE id = ANY($1::text[])",
    [ids],
  );
  return new Map(rows.map((r) => [r.id, r]));
}

describe("packed payloads and hashes", () => {
  const payloads = [
    Buffer.from('{"a":1}'),
    Buffer.alloc(0),
    Buffer.from('{"name":"Zoë 😀 \\"quoted\\" \\\\ back"}', "utf8"),
    Buffer.from([0, 255, 1, 254, 0x5c, 0x22, 0x7b]), // not text: the column is bytea
    Buffer.from(JSON.stringify({ pad: "x".repeat(20_000) })),
    Buffer.from("{}"),
  ];

  it("stores each event's own payload, hash and subject values (a slice of one array each)", async () => {
    const values = (i: number) => Array.from({ length: i % 3 === 0 ? 0 : i }, (_, k) => `v${i}_${k}`);
    const rows = payloads.map((p, i) => row(`evt_pk_${i}`, p, hash(`h${i}`), values(i)));
    const out = await enqueueEvents(db.pool, rows);
    expect(out.size).toBe(rows.length);
    const got = await stored(rows.map((r) => r.id));
    for (const r of rows) {
      expect(got.get(r.id)!.payload.equals(r.payload)).toBe(true);
      expect(got.get(r.id)!.content_hash!.equals(r.contentHash!)).toBe(true);
      expect(got.get(r.id)!.subject_values).toEqual(r.subjectValues);
    }
  });

  it("a row without a hash sends the hashes as an array, and keeps that row's hash NULL", async () => {
    const rows = payloads.map((p, i) => row(`evt_pn_${i}`, p, i === 2 ? null : hash(`n${i}`)));
    await enqueueEvents(db.pool, rows);
    const got = await stored(rows.map((r) => r.id));
    for (const r of rows) {
      expect(got.get(r.id)!.payload.equals(r.payload)).toBe(true);
      if (r.contentHash) expect(got.get(r.id)!.content_hash!.equals(r.contentHash)).toBe(true);
      else expect(got.get(r.id)!.content_hash).toBeNull();
    }
  });

  it("a republished id among new ones leaves the stored bytes alone and the others get their own", async () => {
    const rows = [row("evt_pk_1", Buffer.from('{"changed":true}'), hash("h1")), row("evt_pr_new", Buffer.from('{"new":1}'), hash("new"))];
    const out = await enqueueEvents(db.pool, rows);
    expect([...out.keys()]).toEqual(["evt_pr_new"]);
    const got = await stored(["evt_pk_1", "evt_pr_new"]);
    expect(got.get("evt_pk_1")!.payload.length).toBe(0);
    expect(got.get("evt_pr_new")!.payload.toString()).toBe('{"new":1}');
  });
});

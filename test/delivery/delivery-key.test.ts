// The delivery key exists twice: in SQL (hl_delivery_key, migration 0011), where
// the ledger derives it, and in TypeScript (lib/ledger/delivery-key.ts), for
// receivers and tests. This holds the two equal over odd ids: any Unicode
// text Postgres can store (no U+0000, no lone surrogates), colons anywhere,
// and one-character or whitespace-only ids.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { deliveryKey } from "../../lib/ledger/delivery-key";
import { enqueueEvents } from "../../lib/ledger/sql/enqueue";

let db: TestDb;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db?.close());

const storable = (s: string) => !/\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);
const odd = fc
  .oneof(
    fc.string({ unit: "grapheme", minLength: 1, maxLength: 40 }),
    fc.string({ unit: "binary", minLength: 1, maxLength: 40 }),
    fc.constantFrom(":", "::", " ", "\t", "a:", ":b", "é", "e\u0301", "😀", "sub:evt:1", "\u00a0", "ß", "İ"),
    fc.array(fc.constantFrom(":", "a", "😀", " ", "ä"), { minLength: 1, maxLength: 12 }).map((a) => a.join("")),
  )
  .filter(storable);

async function sqlKeys(pairs: [string, string][]): Promise<string[]> {
  const { rows } = await db.pool.query<{ k: string }>("SELECT hl_delivery_key(s, e) AS k FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(s, e, n) ORDER BY n", [
    pairs.map((p) => p[0]),
    pairs.map((p) => p[1]),
  ]);
  return rows.map((r) => r.k);
}

describe("the delivery key: SQL and TypeScript agree", () => {
  it("on odd ids (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(odd, odd), { minLength: 1, maxLength: 50 }), async (pairs) => {
        expect(await sqlKeys(pairs)).toEqual(pairs.map(([s, e]) => deliveryKey(s, e)));
      }),
      { numRuns: 60 },
    );
  });

  it("on a known value, and the colon is not ambiguous in the formula's use", async () => {
    expect(deliveryKey("sub_lincoln", "evt_1001")).toBe((await sqlKeys([["sub_lincoln", "evt_1001"]]))[0]);
    expect(deliveryKey("a", "b:c")).toBe(deliveryKey("a:b", "c")); // the formula is sha256(sub ":" event), as documented
  });

  it("is what the enqueue stores for every delivery", async () => {
    const subs = ["sub:odd 😀", "sub_plain"];
    for (const id of subs)
      await db.pool.query("INSERT INTO subscriptions (id, name, url, event_types) VALUES ($1, $1, 'https://x.example.test/h', '{assignment.graded}')", [id]);
    const ids = ["evt:ünï:😀", "evt e\u0301", "::"];
    await enqueueEvents(
      db.pool,
      ids.map((id) => ({ id, type: "assignment.graded", payload: Buffer.from("{}"), occurredAt: new Date(), tenant: null, subject: "{}", subjectValues: [] })),
    );
    const { rows } = await db.pool.query("SELECT subscription_id, event_id, delivery_key FROM deliveries WHERE event_id = ANY($1)", [ids]);
    expect(rows).toHaveLength(ids.length * subs.length);
    for (const r of rows) expect(r.delivery_key).toBe(deliveryKey(r.subscription_id, r.event_id));
  });
});

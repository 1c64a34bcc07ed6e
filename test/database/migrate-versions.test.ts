// Every supported PostgreSQL (15 and newer): the runner refuses an older server
// in one line, and 0032's first text (random(min, max), PostgreSQL 17+ only) is
// superseded without breaking the installs that applied it. Installs that
// recorded an earlier text of a migration whose comment changed, or a
// migration under its earlier name, migrate as before.
import crypto from "node:crypto";
import fs from "node:fs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listMigrations, migrate, pendingMigrations, serverVersionRefusal } from "../../lib/db/migrate";
import { dumpSchema } from "../../lib/db/schema-dump";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { databaseBefore } from "../helpers/migration-db";

// 0032 as it was first released; installs on PostgreSQL 17 and 18 recorded this text's checksum.
const FIRST_0032 = `CREATE OR REPLACE FUNCTION hl_new_id(prefix text) RETURNS text LANGUAGE sql VOLATILE AS $$
  SELECT prefix
    || lpad(to_hex((date_part('epoch', clock_timestamp()) * 1000000)::bigint), 14, '0')
    || lpad(to_hex(random(0::bigint, 281474976710655::bigint)), 12, '0')
$$;`;
const FIRST_0032_CHECKSUM = "eaf38eb33958f846ec036937967c20363e2cebaffd364d4d95fdbbf7197c9e67";

const functionDef = async (q: pg.Client | pg.Pool) => (await q.query<{ def: string }>("SELECT pg_get_functiondef('hl_new_id(text)'::regprocedure) AS def")).rows[0].def;

let fresh: TestDb;
beforeAll(async () => {
  fresh = await createTestDatabase();
});
afterAll(async () => fresh?.close());

describe("server versions", () => {
  it("refuses PostgreSQL 14 and older in one line naming both versions, and accepts 15 to 18", () => {
    expect(serverVersionRefusal(140011, "14.11 (Debian 14.11-1)")).toBe("hookledger needs PostgreSQL 15 or newer; this server is 14.11.");
    expect(serverVersionRefusal(90624, "9.6.24")).toBe("hookledger needs PostgreSQL 15 or newer; this server is 9.6.24.");
    for (const num of [150000, 150018, 160004, 170002, 180001]) expect(serverVersionRefusal(num, String(num))).toBeNull();
  });

  it("runs on the server under test, which is one of the supported ones", async () => {
    const { rows } = await fresh.pool.query<{ num: string }>("SELECT current_setting('server_version_num') AS num");
    expect(Number(rows[0].num)).toBeGreaterThanOrEqual(150000);
    // scripts/test-postgres15.sh (or test-postgres-at.sh) says which major it meant, so a run meant for 15 cannot pass on another.
    const expected = process.env.HOOKLEDGER_TEST_EXPECT_SERVER;
    if (expected) expect(Math.floor(Number(rows[0].num) / 10_000)).toBe(Number(expected));
    expect(await functionDef(fresh.pool)).toContain("floor(random()");
  });
});

describe("0032's first text", () => {
  it("is the text whose checksum superseded-checksums lists", () => {
    expect(crypto.createHash("sha256").update(fs.readFileSync("prisma/migrations/0032_id_random_bits/migration.sql", "utf8")).digest("hex")).not.toBe(
      FIRST_0032_CHECKSUM,
    );
    expect(listMigrations().find((m) => m.name === "0032_id_random_bits")!.superseded).toContain(FIRST_0032_CHECKSUM);
    // Its SQL body, comments aside, is FIRST_0032 (kept here to rebuild such an install).
    const first = fs.readFileSync("test/fixtures/0032_id_random_bits.first.sql", "utf8");
    expect(crypto.createHash("sha256").update(first).digest("hex")).toBe(FIRST_0032_CHECKSUM);
    expect(first).toContain(FIRST_0032);
  });

  it("an install that applied it is accepted, and 0034 brings its hl_new_id to the fresh definition", async () => {
    const db = await databaseBefore("0032");
    try {
      const major = Number((await db.client.query("SELECT current_setting('server_version_num') AS n")).rows[0].n) / 10_000;
      // On 17 and 18 the first text itself runs; on 15 and 16 it cannot (which is the bug), so a stand-in body marks the old definition.
      await db.client.query(
        major >= 17 ? FIRST_0032 : "CREATE OR REPLACE FUNCTION hl_new_id(prefix text) RETURNS text LANGUAGE sql VOLATILE AS $$ SELECT prefix || 'old' $$",
      );
      await db.client.query("INSERT INTO _hookledger_migrations (name, checksum) VALUES ('0032_id_random_bits', $1)", [FIRST_0032_CHECKSUM]);
      const applied = await db.applyRest();
      expect(applied).not.toContain("0032_id_random_bits");
      expect(applied).toContain("0034_id_random_bits_portable");
      expect(await functionDef(db.client)).toBe(await functionDef(fresh.pool));
      const { rows } = await db.client.query<{ id: string }>("SELECT hl_new_id('dlv_') AS id");
      expect(rows[0].id).toMatch(/^dlv_[0-9a-f]{26}$/);
    } finally {
      await db.close();
    }
  });

  it("an install that recorded 0002's first text (a comment since corrected) migrates as before", async () => {
    const first = listMigrations().find((m) => m.name === "0002_worker")!;
    expect(first.superseded).toHaveLength(1);
    const db = await databaseBefore("0033");
    try {
      await db.client.query("UPDATE _hookledger_migrations SET checksum = $1 WHERE name = '0002_worker'", [first.superseded[0]]);
      expect(await db.applyRest()).toEqual(db.rest);
    } finally {
      await db.close();
    }
  });

  it("any other recorded text is still refused as an edited migration", async () => {
    const db = await databaseBefore("0033");
    try {
      await db.client.query("UPDATE _hookledger_migrations SET checksum = $1 WHERE name = '0032_id_random_bits'", ["0".repeat(64)]);
      await expect(db.applyRest()).rejects.toThrow("Migration 0032_id_random_bits was changed after it was applied");
    } finally {
      await db.close();
    }
  });
});

describe("texts whose opening comment changed", () => {
  // Their comments cited sections of BENCHMARKS.md that moved to bench/HISTORY.md; each folder lists the text before.
  const changed = [
    "0024_enqueue_cost",
    "0025_delivery_key_hash",
    "0026_event_keys_trigger",
    "0028_event_reference",
    "0029_deliveries_by_event_month",
    "0031_batch_item_event_reference",
    "0032_id_random_bits",
    "0033_enqueue_packed_payloads",
  ];

  it("an install that recorded the earlier texts migrates as before, and a text no folder lists is refused", async () => {
    const all = listMigrations();
    const db = await databaseBefore("0034");
    try {
      for (const name of changed) {
        const m = all.find((x) => x.name === name)!;
        expect(m.superseded.length, name).toBeGreaterThan(0);
        expect(m.superseded, name).not.toContain(m.checksum);
        await db.client.query("UPDATE _hookledger_migrations SET checksum = $1 WHERE name = $2", [m.superseded.at(-1), name]);
      }
      expect(await db.applyRest()).toEqual(db.rest);
      await db.client.query("UPDATE _hookledger_migrations SET checksum = $1 WHERE name = '0028_event_reference'", ["f".repeat(64)]);
      await expect(migrate(db.url)).rejects.toThrow("Migration 0028_event_reference was changed after it was applied");
    } finally {
      await db.close();
    }
  });
});

describe("0019a_erasure_guard, which was 0019_erasure_guard", () => {
  it("keeps its place in the order, no two migrations share a number, and its folder names the old name", () => {
    const names = listMigrations().map((m) => m.name);
    const at = names.indexOf("0019a_erasure_guard");
    expect(names.slice(at - 1, at + 2)).toEqual(["0019_erasure", "0019a_erasure_guard", "0020_tenants"]);
    expect(listMigrations().find((m) => m.name === "0019a_erasure_guard")!.formerly).toEqual(["0019_erasure_guard"]);
    const numbers = names.map((n) => n.split("_")[0]);
    expect(new Set(numbers).size).toBe(numbers.length);
    const every = listMigrations().flatMap((m) => [m.name, ...m.formerly]);
    expect(new Set(every).size).toBe(every.length);
  });

  it("an install that applied it under its old name applies nothing twice and ends with the fresh schema", async () => {
    // Migrated through 0019 by the earlier tree, which recorded the guard as 0019_erasure_guard (its text is unchanged).
    const db = await databaseBefore("0020");
    try {
      await db.client.query("UPDATE _hookledger_migrations SET name = '0019_erasure_guard' WHERE name = '0019a_erasure_guard'");
      expect(await pendingMigrations(db.client)).toEqual(db.rest);
      const applied = await db.applyRest();
      expect(applied).toEqual(db.rest);
      expect(applied).not.toContain("0019a_erasure_guard");
      const { rows } = await db.client.query<{ name: string }>("SELECT name FROM _hookledger_migrations WHERE name LIKE '0019%' ORDER BY name");
      expect(rows.map((r) => r.name)).toEqual(["0019_erasure", "0019_erasure_guard"]);
      expect(await migrate(db.url)).toEqual([]);
      expect(await pendingMigrations(db.client)).toEqual([]);
      expect(await dumpSchema(db.client)).toBe(await dumpSchema(fresh.pool));
    } finally {
      await db.close();
    }
  });
});

// migrate() checks the version before anything else: on a supported server a
// second run applies nothing and writes nothing.
it("migrate on an up-to-date database applies nothing", async () => {
  expect(await migrate(fresh.url)).toEqual([]);
});

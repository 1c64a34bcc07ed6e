// A database migrated up to (not including) one migration, for tests that
// apply that migration over rows written the old way: fill it through
// `client`, then `applyRest()` applies the cut migration and every one after
// it and returns the names it applied (`rest` lists them beforehand).
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { expect, inject } from "vitest";
import { listMigrations, migrate, migrationsDir } from "../../lib/db/migrate";
import { dropDatabase } from "./db";

export type MigrationDb = {
  url: string;
  /** Connected to the database; `close()` ends it. */
  client: pg.Client;
  /** Names of the cut migration and every one after it, in order. */
  rest: string[];
  applyRest: () => Promise<string[]>;
  /** Ends the client, drops the database, removes the copied migrations. */
  close: () => Promise<void>;
};

/** `prefix` names the cut migration by its number, e.g. "0019". */
export async function databaseBefore(prefix: string): Promise<MigrationDb> {
  const adminUrl = inject("adminUrl");
  const all = listMigrations();
  const cut = all.findIndex((m) => m.name.startsWith(`${prefix}_`));
  expect(cut).toBeGreaterThan(0);
  const name = `hl_mig${prefix}_${randomBytes(4).toString("hex")}`;
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  const url = u.toString();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `hl-mig${prefix}-`));
  // The whole folder: a migration may carry more than its SQL (superseded-checksums).
  const copy = (m: (typeof all)[number]) => fs.cpSync(path.join(migrationsDir(), m.name), path.join(dir, m.name), { recursive: true });
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const client = new pg.Client({ connectionString: url });
  const close = async () => {
    await client.end().catch(() => {});
    await dropDatabase(adminUrl, name);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    all.slice(0, cut).forEach(copy);
    await migrate(url, { dir });
    await client.connect();
  } catch (e) {
    await close();
    throw e;
  }
  return {
    url,
    client,
    rest: all.slice(cut).map((m) => m.name),
    applyRest: async () => {
      all.slice(cut).forEach(copy);
      return migrate(url, { dir });
    },
    close,
  };
}

/**
 * `after`'s rows as `before`'s columns see them: a migration applied later (applyRest applies every one after the
 * cut) may add a column, which must start empty (null) on the rows that were there; every other value must be kept.
 */
export function asBefore(before: Record<string, unknown>[], after: Record<string, unknown>[]): Record<string, unknown>[] {
  const kept = new Set(before.flatMap((r) => Object.keys(r)));
  return after.map((r) => {
    const added = Object.entries(r).filter(([k, v]) => !kept.has(k) && v !== null);
    expect(added, "a later migration's new column holds a value on an existing row").toEqual([]);
    return Object.fromEntries(Object.entries(r).filter(([k]) => kept.has(k)));
  });
}

/**
 * Every row of `table` as JSON, ordered by `orderBy` (the table's key, so two reads line up row for row), with
 * `columns` only when given: what a migration test reads before `applyRest()` and compares after. An empty table
 * reads as []. The names are quoted as identifiers.
 */
export async function tableRows(
  client: pg.ClientBase | pg.Pool,
  table: string,
  orderBy: readonly [string, ...string[]],
  columns?: readonly string[],
): Promise<Record<string, unknown>[]> {
  const id = (name: string) => pg.escapeIdentifier(name);
  const select = columns ? columns.map(id).join(", ") : "*";
  const order = orderBy.map((c) => `r.${id(c)}`).join(", ");
  const { rows } = await client.query(`SELECT coalesce(json_agg(r ORDER BY ${order}), '[]') AS rows FROM (SELECT ${select} FROM ${id(table)}) r`);
  return rows[0].rows;
}

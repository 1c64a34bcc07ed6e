// Per-file isolated databases cloned from the migrated template.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";
import { createPrisma, setPrisma, type PrismaClient } from "../../lib/db/prisma";

export type TestDb = { url: string; name: string; prisma: PrismaClient; pool: pg.Pool; close: () => Promise<void> };

/**
 * A fresh database for this test file. It also becomes DATABASE_URL and the
 * process-wide Prisma client, so route handlers and library code use it.
 */
export async function createTestDatabase(): Promise<TestDb> {
  const adminUrl = inject("adminUrl");
  const template = inject("templateDb");
  const parent = template.replace("hl_template_", "");
  const name = `hl_t_${parent}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  await admin.end();
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  const url = u.toString();
  process.env.DATABASE_URL = url;
  const prisma = createPrisma(url);
  setPrisma(prisma);
  const pool = new pg.Pool({ connectionString: url, max: 5 });
  pool.on("error", () => {});
  return {
    url,
    name,
    prisma,
    pool,
    close: async () => {
      await prisma.$disconnect().catch(() => {});
      await pool.end().catch(() => {});
      const g = globalThis as { __hookledgerPool?: pg.Pool };
      await g.__hookledgerPool?.end().catch(() => {});
      g.__hookledgerPool = undefined;
      setPrisma(undefined);
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
      await c.end();
    },
  };
}

/** Row counts of every ledger table: "changes nothing" assertions compare two of these. */
export async function tableCounts(pool: pg.Pool): Promise<Record<string, number>> {
  const tables = ["subscriptions", "subscription_secrets", "events", "deliveries", "attempts", "audit_entries"];
  const out: Record<string, number> = {};
  for (const t of tables) out[t] = Number((await pool.query(`SELECT count(*)::int AS n FROM ${t}`)).rows[0].n);
  return out;
}

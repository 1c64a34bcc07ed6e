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
      await dropDatabase(adminUrl, name);
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

/**
 * Drops a test's database once its connections are gone (at most 2 s, then by force). A pool's end() resolves once
 * its clients are told to end, not once their backends have gone; a DROP ... FORCE in between terminates a backend
 * whose client no longer listens for errors, and the FATAL it receives fails the whole run as an unhandled error.
 */
export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    for (let i = 0; i < 40; i++) {
      const { rows } = await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1`, [name]);
      if (rows[0].n === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
  } finally {
    await c.end();
  }
}

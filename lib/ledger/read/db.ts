// How the ledger's read and redrive statements run. Each statement is built as
// a parameterised Prisma.Sql (values travel as parameters, never inside the
// text; fragments compose with Prisma.join) and runs on whatever connection
// the caller holds: the dashboard's pg pool, a pg client inside a transaction
// (the sampler, the redrive pacer) or a Prisma transaction (a mutation whose
// audit row must commit with it).
import "server-only";
import type pg from "pg";
import { Prisma } from "../../generated/prisma/client";
import type { PrismaClient, Tx } from "../../db/prisma";
import { getPool } from "../../db/pool";

export { Prisma };
export const sql = Prisma.sql;
export const join = Prisma.join;
export const empty = Prisma.empty;
export type Sql = Prisma.Sql;

export type LedgerDb = pg.Pool | pg.PoolClient | pg.Client | PrismaClient | Tx;

/** The process-wide pool (statement_timeout 10 s): what requests read through. */
export const ledgerDb = (): pg.Pool => getPool();

function isPrisma(db: LedgerDb): db is PrismaClient | Tx {
  return "$queryRaw" in db;
}

export async function queryRows<T>(db: LedgerDb, q: Sql): Promise<T[]> {
  if (isPrisma(db)) return db.$queryRaw<T[]>(q);
  return (await db.query(q.text, q.values)).rows as T[];
}

/** Runs a statement for its effect; the number of rows it touched. */
export async function execute(db: LedgerDb, q: Sql): Promise<number> {
  if (isPrisma(db)) return db.$executeRaw(q);
  return (await db.query(q.text, q.values)).rowCount ?? 0;
}

/** An ISO string from a timestamp column (pg gives Date, some casts give text). */
export const iso = (x: Date | string | null | undefined): string | null => (x ? new Date(x).toISOString() : null);

/** A number from an integer column (Prisma returns bigint columns as BigInt, pg as a number). */
export const num = (x: number | bigint | string | null | undefined): number => (x === null || x === undefined ? 0 : Number(x));

// How the ledger's statements are built and where they run (docs/DESIGN.md,
// "Which driver for what"). A statement is a parameterised `sql` template:
// values travel as parameters ($1, $2, …), never inside the text, and
// fragments nest and compose with `join`. It runs on `pg`: the dashboard's
// pool, or a client checked out for a transaction (the sampler, the redrive
// pacer, the worker). The one other connection is a Prisma interactive
// transaction, where a ledger statement must commit with Prisma's writes: an
// operator action's audit row (writeAudit) and configuration rows, or a
// producer's own writes around publishEvent (the outbox). It is reached
// through its raw statement methods only, so nothing here imports Prisma.
import "server-only";
import type pg from "pg";
import { getPool } from "../../db/pool";

/**
 * A statement: text with $n placeholders and its values. Nested statements are
 * inlined when built, their placeholders renumbered, so the text is computed
 * from flat parts.
 */
export class Sql {
  readonly values: unknown[] = [];
  private readonly parts: string[];

  constructor(strings: readonly string[], values: readonly unknown[]) {
    this.parts = [strings[0]];
    values.forEach((v, i) => {
      if (v instanceof Sql) {
        this.parts[this.parts.length - 1] += v.parts[0];
        v.values.forEach((inner, j) => {
          this.values.push(inner);
          this.parts.push(v.parts[j + 1]);
        });
        this.parts[this.parts.length - 1] += strings[i + 1];
      } else {
        this.values.push(v);
        this.parts.push(strings[i + 1]);
      }
    });
  }

  get text(): string {
    return this.parts.reduce((text, part, i) => `${text}$${i}${part}`);
  }
}

/** sql`SELECT … WHERE id = ${id}`: each interpolated value a parameter, each interpolated Sql inlined. */
export const sql = (strings: TemplateStringsArray, ...values: unknown[]): Sql => new Sql(strings, values);

/** Text put into a statement as it is: only for constants of this code base (column lists, identifiers it quoted), never input. */
export const raw = (text: string): Sql => new Sql([text], []);

export const empty = raw("");

/** The fragments one after another with `separator` between them. */
export function join(fragments: readonly Sql[], separator: string): Sql {
  if (fragments.length === 0) return empty;
  return new Sql(["", ...fragments.slice(1).map(() => separator), ""], fragments);
}

/**
 * A Prisma interactive transaction, as the ledger sees it: its raw statement methods. A transaction's client
 * has no `$connect` and the PrismaClient has one, so the client itself (statements outside any transaction) is not
 * accepted: those run on the pool.
 */
type PrismaTx = {
  $queryRaw<T = unknown>(query: TemplateStringsArray, ...values: unknown[]): PromiseLike<T>;
  $executeRaw(query: TemplateStringsArray, ...values: unknown[]): PromiseLike<number>;
  $connect?: never;
};

/** What a ledger statement runs on: `pg` (the pool, or a client in a transaction), or a PrismaTx. */
export type LedgerDb = pg.Pool | pg.PoolClient | PrismaTx;

/** The process-wide pool (statement_timeout 10 s): what requests read through. */
export const ledgerDb = (): pg.Pool => getPool();

function isPrismaTx(db: LedgerDb): db is PrismaTx {
  return "$queryRaw" in db;
}

/**
 * A statement as a tagged template's arguments, for a Prisma transaction's $queryRaw/$executeRaw: the text
 * split at its $n placeholders, each placeholder's value in its place (a value used twice is passed twice), so
 * the values stay parameters there too.
 */
function asTemplate(q: Statement): [TemplateStringsArray, ...unknown[]] {
  const strings: string[] = [];
  const values: unknown[] = [];
  let at = 0;
  for (const m of q.text.matchAll(/\$(\d+)/g)) {
    strings.push(q.text.slice(at, m.index));
    values.push(q.values[Number(m[1]) - 1]);
    at = m.index + m[0].length;
  }
  strings.push(q.text.slice(at));
  return [Object.assign(strings, { raw: [...strings] }), ...values];
}

/** A statement to run; `name` makes pg prepare it once per connection (the hot paths). */
type Statement = { text: string; values: unknown[]; name?: string };

const runPg = (db: pg.Pool | pg.PoolClient, q: Statement) => (q.name ? db.query({ name: q.name, text: q.text, values: q.values }) : db.query(q.text, q.values));

export async function queryRows<T>(db: LedgerDb, q: Statement): Promise<T[]> {
  if (isPrismaTx(db)) return db.$queryRaw<T[]>(...asTemplate(q));
  return (await runPg(db, q)).rows as T[];
}

/** Runs a statement for its effect; the number of rows it touched. */
export async function execute(db: LedgerDb, q: Statement): Promise<number> {
  if (isPrismaTx(db)) return db.$executeRaw(...asTemplate(q));
  return (await runPg(db, q)).rowCount ?? 0;
}

/** An ISO string from a timestamp column (pg gives Date, some casts give text). */
export const iso = (x: Date | string | null | undefined): string | null => (x ? new Date(x).toISOString() : null);

/** A number from an integer column (a Prisma transaction returns bigint columns as BigInt, pg as a number). */
export const num = (x: number | bigint | string | null | undefined): number => (x === null || x === undefined ? 0 : Number(x));

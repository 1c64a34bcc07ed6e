// What bench/db-drain.ts and bench/db-ingest.ts share: their command line
// (a flag's value, and the `--variant "name=SQL"` runs) and the two measures of
// Postgres's work that do not move with the machine's speed (WAL and buffer
// accesses per unit of work), read after pg_stat_wal and pg_stat_statements
// were reset.
import type pg from "pg";

/** The value after `flag` on the command line, or `fallback`. */
export function argOf(flag: string, fallback: string): string {
  const i = process.argv.indexOf(flag);
  return i > 0 ? process.argv[i + 1] : fallback;
}

/** ["as is", ""] first, then each `--variant "name=SQL"` in order. */
export function variantsOf(): [string, string][] {
  const out: [string, string][] = [["as is", ""]];
  process.argv.forEach((a, i) => {
    if (a === "--variant") {
      const v = process.argv[i + 1];
      const eq = v.indexOf("=");
      out.push([v.slice(0, eq), v.slice(eq + 1)]);
    }
  });
  return out;
}

/** WAL records and bytes, buffer accesses and dirtied buffers per `unit` (n of them) since the resets. */
export async function workProxies(db: pg.Pool, n: number, unit: string): Promise<string> {
  const w = (await db.query("SELECT wal_records, wal_fpi, wal_bytes FROM pg_stat_wal")).rows[0];
  const b = (
    await db.query("SELECT sum(shared_blks_hit + shared_blks_read)::float AS hit, sum(shared_blks_dirtied)::float AS dirtied FROM pg_stat_statements WHERE toplevel")
  ).rows[0];
  return `WAL ${(w.wal_records / n).toFixed(1)} rec ${Math.round(w.wal_bytes / n)} B (fpi ${w.wal_fpi}) buffers ${(b.hit / n).toFixed(1)} dirtied ${(b.dirtied / n).toFixed(2)} /${unit}`;
}

// Checked-out pg clients need an 'error' listener: while a client is out of the
// pool, pg-pool's own listener is detached, so a server-side disconnect (a
// Postgres restart: 57P01) would be an unhandled 'error' event and kill the
// process (found by the chaos suite: workers died at a Postgres restart).
import "server-only";
import type pg from "pg";

const broken = new WeakMap<pg.PoolClient, { err?: Error; onError: (err: Error) => void }>();

/** pool.connect() with an 'error' listener attached for as long as the client is out. */
export async function connectGuarded(pool: pg.Pool): Promise<pg.PoolClient> {
  const client = await pool.connect();
  const state: { err?: Error; onError: (err: Error) => void } = { onError: (err) => (state.err = err) };
  client.on("error", state.onError);
  broken.set(client, state);
  return client;
}

/** Releases a client from connectGuarded; one whose connection failed is destroyed, not reused. */
export function releaseGuarded(client: pg.PoolClient): void {
  const state = broken.get(client);
  if (state) {
    client.off("error", state.onError);
    broken.delete(client);
  }
  client.release(state?.err);
}

/**
 * Runs fn between BEGIN and COMMIT on a client already checked out. A throw rolls the transaction back and is
 * rethrown; a ROLLBACK that fails too (the connection is gone) is not what the caller needs to hear, so the first
 * error is kept. A caller with nothing to write returns early: committing a transaction that wrote nothing ends it as
 * a rollback would, and lets go of its transaction-level locks the same way.
 */
export async function inTransaction<T>(client: pg.ClientBase, fn: () => Promise<T>): Promise<T> {
  await client.query("BEGIN");
  try {
    const out = await fn();
    await client.query("COMMIT");
    return out;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  }
}

/** inTransaction on a client of its own from the pool (connectGuarded), released when the transaction ends. */
export async function withTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await connectGuarded(pool);
  try {
    return await inTransaction(client, () => fn(client));
  } finally {
    releaseGuarded(client);
  }
}

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

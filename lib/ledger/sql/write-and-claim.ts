// The worker's cycle: its results written and its next batch claimed in one
// statement under the claim lock (docs/PLATFORM.md: one commit, one WAL flush,
// per cycle).
import "server-only";
import type pg from "pg";
import { claimCtes, claimParams, claimWindow, nextWindowStart, windowEndSelect, type ClaimedRow, type ClaimOptions } from "./claim";
import type { Freeze } from "./freeze";
import { releaseUnsent } from "./release-unsent";
import { hasGone, holdEndpoints, resultsJson, writeCtes, writeResults, type AttemptResult } from "./write-results";

/**
 * One cycle of the hot path in one statement, under the claim lock
 * (inClaimLock), so one transaction and one commit: the results written
 * (writeCtes) and the next batch claimed (claimCtes). A commit is a WAL flush;
 * paying one per cycle rather than one per claim and one per write is what
 * the worker's concurrency slots wait on (BENCHMARKS.md F1). Both halves see
 * the statement's one snapshot: the rows being written are still in flight in
 * it, so they must be among `answered`, and the claim cannot see a
 * subscription the write disables for a 410, so a batch holding a 410 claims
 * nothing (`claim` null does the same), and the rows it claims for a
 * subscription the write pauses for failing are released before the commit. The claimed rows' leases are committed
 * before any of them is sent. `frozen` months (./freeze.ts) are left out of
 * both halves when they are planned: the caller holds their rows' results.
 */
export async function writeAndClaim(
  db: pg.Pool,
  owner: string,
  results: AttemptResult[],
  claim: Omit<ClaimOptions, "owner"> | null,
  frozen: readonly Freeze[] = [],
): Promise<{ applied: AttemptResult[]; claimed: ClaimedRow[]; after?: string }> {
  if (!claim || hasGone(results)) return { applied: await writeResults(db, owner, results, frozen), claimed: [] };
  return inClaimLock(db, async (c) => {
    if (results.length === 0) return { applied: [], ...(await claimWindow(c, { owner, ...claim, frozen })) };
    // The claimed rows, or one row without a delivery when none is claimed (it carries the window's end), then the written results.
    const { rows } = await c.query<ClaimedRow & { ord: number | null; paused: boolean | null; windowEnd: string | null }>({
      text: `WITH ${writeCtes(false, frozen)},${claimCtes({ owner: "$1", limit: "$3", perSub: "$4", exclude: "$5", slack: "$6", answered: "$7", held: "$8", after: "$9", frozen })}
       SELECT c.*, NULL::int AS ord, c."subscriptionId" IN (SELECT id FROM fw_paused) AS paused, ${windowEndSelect} FROM (SELECT 1) one LEFT JOIN claimed c ON true
       UNION ALL
       SELECT c.*, u.ord, false, NULL FROM upd u LEFT JOIN claimed c ON false`,
      values: [owner, resultsJson(results), ...claimParams({ owner, ...claim })],
    });
    const applied: AttemptResult[] = [];
    const claimed: ClaimedRow[] = [];
    const unclaim: ClaimedRow[] = [];
    let windowEnd: string | null = null;
    for (const row of rows) {
      if (row.ord !== null) applied.push(results[row.ord - 1]);
      else {
        windowEnd = row.windowEnd;
        if (row.id === null) continue;
        if (row.paused) unclaim.push(row);
        else claimed.push(row);
      }
    }
    // Rows of a subscription this statement paused for failing: its claim saw the subscription
    // still active (one snapshot). Put back before the commit, so a paused endpoint gets no
    // further attempt (./subscription-state.ts).
    if (unclaim.length > 0) await releaseUnsent(c, owner, unclaim);
    await holdEndpoints(c, applied);
    return { applied, claimed, after: nextWindowStart(claimed, claim.limit, windowEnd) };
  });
}

const ignore = () => {};

/** The advisory lock claims take (an arbitrary constant: "hlclaim" in ASCII). */
const CLAIM_LOCK = 0x686c636c61696d;

/**
 * Runs `fn` in a transaction that first takes the claim lock, so that claims
 * never overlap, across all workers. A claim counts each subscription's
 * in-flight rows in its statement's snapshot: two claims side by side would
 * each see the other's leases as free slots and together exceed
 * `max_concurrency` (test/delivery/worker-processes.test.ts saw 12 requests on the wire
 * for a cap of 4 with four workers). The lock is taken in its own statement,
 * so the claim's snapshot, taken after it, sees every earlier claim committed.
 * A worker waits at most for the other workers' cycles; one worker alone
 * never waits.
 */
async function inClaimLock<T>(db: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await db.connect();
  // A checked-out client has no pool listener: a connection lost meanwhile (Postgres restarted)
  // must reject the query under way, not crash the process with an unhandled 'error' event.
  c.on("error", ignore);
  try {
    await c.query(`BEGIN; SELECT pg_advisory_xact_lock(${CLAIM_LOCK})`);
    const out = await fn(c);
    await c.query("COMMIT");
    c.off("error", ignore);
    c.release();
    return out;
  } catch (err) {
    // The connection may be gone or mid-transaction: drop it rather than return it to the pool
    // (the no-op listener stays: the dropped client may still report its socket's end).
    c.release(err as Error);
    throw err;
  }
}

// The failure window counts the run of failed attempts by when each attempt started, not by when its result
// was written. With parallel sends, a slow success that started before a run of failures can be written in a
// later result batch than theirs: it must not end the run that began after it. A success that started after the
// run began still ends it. Real Postgres; the rows are claimed and their results written as a worker does.
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { createSub, delivered, retried503, seedEvents } from "../helpers/worker-helpers";
import { claimDeliveries } from "../../lib/ledger/sql/claim";
import { writeResults } from "../../lib/ledger/sql/write-results";

let db: TestDb;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db?.close());

/** A subscription with four claimed deliveries; its policy counts runs but does not pause within the test (a day's window). */
async function fourClaimed(id: string) {
  await createSub(db.pool, { id, url: "http://127.0.0.1:9/hooks", maxConcurrency: 4 });
  await db.pool.query("UPDATE subscriptions SET failure_window_seconds = 86400, failure_min_attempts = 3, probe_interval_seconds = 60 WHERE id = $1", [id]);
  await seedEvents(db.pool, `evt_${id}_`, 4, [id]);
  const rows = await claimDeliveries(db.pool, { owner: "w1", limit: 10, perSubscription: 10, leaseSlackSeconds: 30, excludeSubscriptions: [] });
  expect(rows).toHaveLength(4);
  return rows;
}

const run = async (id: string) =>
  (await db.pool.query("SELECT failing_attempts, failing_since, state FROM subscriptions WHERE id = $1", [id])).rows[0] as {
    failing_attempts: number;
    failing_since: Date | null;
    state: string;
  };

const at = (t0: number, s: number) => new Date(t0 + s * 1000);

it("a slow success written after the failures that started after it leaves their run counted", async () => {
  const [slow, ...fast] = await fourClaimed("sub_fwo_slow");
  const t0 = Date.now() - 60_000;
  const later = new Date(Date.now() + 3_600_000);
  // The three sent after the slow one fail and are written first.
  await writeResults(
    db.pool,
    "w1",
    fast.map((row, i) => ({ ...retried503(row, later), startedAt: at(t0, 2 + i) })),
  );
  expect(await run("sub_fwo_slow")).toMatchObject({ failing_attempts: 3, failing_since: at(t0, 2) });
  // The slow one, sent first, succeeds and is written in the next batch: the failures after it still stand.
  await writeResults(db.pool, "w1", [{ ...delivered(slow), startedAt: at(t0, 0) }]);
  expect(await run("sub_fwo_slow")).toMatchObject({ failing_attempts: 3, failing_since: at(t0, 2), state: "active" });
});

it("a success that started after the run began ends it", async () => {
  const [first, ...rest] = await fourClaimed("sub_fwo_ends");
  const t0 = Date.now() - 60_000;
  const later = new Date(Date.now() + 3_600_000);
  await writeResults(db.pool, "w1", [{ ...retried503(first, later), startedAt: at(t0, 0) }]);
  expect(await run("sub_fwo_ends")).toMatchObject({ failing_attempts: 1, failing_since: at(t0, 0) });
  // One success after the run began, and a failure after that success in the same batch: the run is that failure.
  await writeResults(db.pool, "w1", [
    { ...delivered(rest[0]), startedAt: at(t0, 5) },
    { ...retried503(rest[1], later), startedAt: at(t0, 6) },
  ]);
  expect(await run("sub_fwo_ends")).toMatchObject({ failing_attempts: 1, failing_since: at(t0, 6) });
  await writeResults(db.pool, "w1", [{ ...delivered(rest[2]), startedAt: at(t0, 7) }]);
  expect(await run("sub_fwo_ends")).toMatchObject({ failing_attempts: 0, failing_since: null });
});

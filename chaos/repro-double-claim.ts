// Repro for a duplicate send found by the chaos suite (invariants
// no_send_after_2xx, one_result_per_attempt): a worker whose lease on a row
// expired under it (reaped while its request was still on the wire) claims the
// same row again. Both requests are then in flight from one worker, and the
// result of the first (stale) one is applied to the second claim, because the
// result write is guarded by `lease_owner` only, which is the same for both.
//
// Timeline here (one worker, one delivery):
//   t=0     claim 1, request 1 on the wire (the receiver answers it 429 after 1.2 s)
//   t≈0.3   the lease is expired by hand; the reaper records an abandoned attempt
//   t≈0.5   the same worker claims again: request 2 (answered 200 after 2 s)
//   t≈1.2   the 429 of request 1 is written against claim 2: state scheduled, retry in 1 s
//   t≈2.3   claim 3 while request 2 is still on the wire: request 3
//   t≈2.5   the 200 of request 2 is discarded ("lease no longer held"): a 2xx with no attempt row
// Three requests for one delivery, only one of them explained by an ambiguous (reaped) attempt.
//
//   node bin/run-ts.mjs chaos/repro-double-claim.ts
// It starts its own Postgres in a temporary folder and stops everything at the end.
import http from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { ChaosPostgres } from "./postgres";
import { migrate } from "../lib/db/migrate";
import { startWorker } from "../worker/worker";
import { enqueueEvents } from "../lib/ledger/sql/enqueue";

process.env.LOG_LEVEL ??= "warn";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const p = new ChaosPostgres();
const url = await p.start();
await migrate(url);
const pool = new pg.Pool({ connectionString: url });
pool.on("error", () => {});

const seen: { n: number; at: number; status: number }[] = [];
const t0 = Date.now();
const server = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    const n = seen.length + 1;
    // Request 1: slow 429; request 2: slower 200; any later one: 200 at once.
    const [delay, status] = n === 1 ? [1200, 429] : n === 2 ? [2000, 200] : [0, 200];
    seen.push({ n, at: Date.now() - t0, status });
    setTimeout(() => res.writeHead(status).end(), delay);
  });
});
await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
const target = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;

await pool.query(
  `INSERT INTO subscriptions (id, name, url, event_types, retry_policy) VALUES ('sub_r', 'sub_r', $1, '{assignment.graded}', '{"ladderSeconds":[1,1,1],"timeoutMs":5000}')`,
  [target],
);
const w = startWorker({
  databaseUrl: url,
  pollIntervalMs: 100,
  reapIntervalMs: 100,
  leaseSlackMs: 30_000,
  allowPrivateTargets: true,
  handleSignals: false,
  random: () => 0.5,
});
await sleep(500);
await enqueueEvents(pool, [
  { id: "evt_r", type: "assignment.graded", payload: Buffer.from('{"id":"evt_r"}'), occurredAt: new Date(), tenant: null, subject: "{}", subjectValues: [] },
]);
while (seen.length < 1) await sleep(20);
await sleep(300);
const expired = await pool.query("UPDATE deliveries SET lease_until = now() - interval '1 second' WHERE state = 'in_flight' RETURNING id");
console.log(`expired the lease of ${expired.rowCount} row while request 1 was on the wire`);
for (let i = 0; i < 100; i++) {
  const { rows } = await pool.query("SELECT state FROM deliveries");
  if (rows[0].state === "delivered") break;
  await sleep(100);
}
await sleep(300);
const { rows: attempts } = await pool.query(
  "SELECT id, attempt_number, outcome, status_code, error_class, worker_id, to_char(started_at, 'HH24:MI:SS.MS') AS started FROM attempts ORDER BY id",
);
console.log("requests the receiver saw (ms since start):", JSON.stringify(seen));
console.table(attempts);
const { rows: d } = await pool.query("SELECT state, total_attempts FROM deliveries");
console.log("delivery:", JSON.stringify(d[0]));
const after200 = seen.filter((s) => s.n > 2).length;
console.log(
  after200 > 0
    ? `BUG: request 1's 429 was recorded against the second claim, so the row was sent ${after200} more time(s) while request 2 was still on the wire; request 2's 200 was discarded and has no attempt row.`
    : "no duplicate send (fixed?)",
);
await w.stop();
await pool.end();
server.close();
await p.destroy();
process.exit(after200 > 0 ? 1 : 0);

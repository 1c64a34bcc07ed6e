// Repro for a worker crash found by the chaos suite: Postgres restarts while the
// workers' redrive pacers are stepping a batch, and worker processes exit 1 with
// "Unhandled 'error' event" on a pg Client. With TRACE=1 each worker prints
// where the client without an error listener was checked out
// (worker/redrive-pacer.ts tick(): `await pool.connect()`).
//   node bin/run-ts.mjs chaos/repro-pacer-restart.ts        # TRACE=1 for the trace
// It starts its own Postgres in a temporary folder and stops everything at the end.
import fs from "node:fs";
import path from "node:path";
import os from "node:os";
import pg from "pg";
import { ChaosPostgres } from "./postgres";
import { migrate } from "../lib/db/migrate";
import { WorkerFleet } from "./workers";
import { seedFixtureDeliveries } from "../lib/ledger/sql/seed";
const p = new ChaosPostgres();
const url = await p.start();
await migrate(url);
const pool = new pg.Pool({ connectionString: url });
pool.on("error", () => {});
await pool.query(
  `INSERT INTO subscriptions (id, name, url, event_types, retry_policy) VALUES ('s1','s1','http://127.0.0.1:9/x','{assignment.graded}','{"ladderSeconds":[3600]}')`,
);
await seedFixtureDeliveries(pool, {
  prefix: "e",
  from: 1,
  to: 20000,
  subs: ["s1"],
  eventType: "assignment.graded",
  padBytes: 0,
  state: "dead_letter",
  attemptCount: 1,
  dueOffsetSql: "interval '1 day'",
});
await pool.query(`INSERT INTO redrive_batches (id, filter, reason, actor, rate_per_second, matched, paced_until) VALUES ('rb1','{}','x','t',20,20000, now())`);
await pool.query(`INSERT INTO redrive_batch_items (batch_id, seq, delivery_id) SELECT 'rb1', row_number() over (order by id), id FROM deliveries`);
// A preload that reports, for any pg Client that emits 'error' with no listener, where it was connected.
const trace = path.join(os.tmpdir(), `hookledger-pgtrace-${process.pid}.cjs`);
fs.writeFileSync(
  trace,
  `const pg = require(${JSON.stringify(path.resolve("node_modules/pg"))});
const C = pg.Client.prototype, connect = C.connect, emit = C.emit;
C.connect = function (...a) { this.__stack = new Error("client connected at").stack; return connect.apply(this, a); };
C.emit = function (ev, ...a) { if (ev === "error" && this.listenerCount("error") === 0) console.error("UNHANDLED client error; " + this.__stack); return emit.call(this, ev, ...a); };
`,
);
const fleet = new WorkerFleet({
  databaseUrl: url,
  logDir: p.dir + "/logs",
  env: { LOG_LEVEL: "warn", HOOKLEDGER_DATA_DIR: p.dir, NODE_OPTIONS: process.env.TRACE ? `--require ${trace}` : "" },
});
const ws = [fleet.spawn(), fleet.spawn(), fleet.spawn()];
for (let i = 0; i < 240; i++) {
  const { rows } = await pool.query("SELECT count(*)::int n FROM worker_heartbeats").catch(() => ({ rows: [{ n: 0 }] }));
  if (rows[0].n >= 3) break;
  await new Promise((r) => setTimeout(r, 500));
}
console.log("workers up");
for (let i = 0; i < 6; i++) {
  await new Promise((r) => setTimeout(r, 2000 + Math.random() * 1000));
  await p.restart(1000);
  await new Promise((r) => setTimeout(r, 1500));
  console.log(`restart ${i + 1}: exits ${ws.map((w) => w.exit).join(",")}`);
}
for (const w of ws)
  if (w.exit !== null)
    console.log(
      `worker ${w.n}:\n` +
        fleet
          .tail(w, 40)
          .split("\n")
          .filter((l) => !l.startsWith("{"))
          .slice(0, 25)
          .join("\n"),
    );
fleet.killAllNow();
await pool.end().catch(() => {});
await p.destroy();
fs.rmSync(trace, { force: true });
process.exit(0);

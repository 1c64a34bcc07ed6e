// The claim's window: it visits the subscriptions with queued rows, found from
// the trigger-kept counters in id order from where the worker's previous claim
// left off, so thousands of idle subscriptions cost nothing and the busy ones
// take turns (lib/ledger/sql/claim.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { createSub, seedEvents } from "../helpers/worker-helpers";
import { claimCtes, claimParams, claimWindow, type ClaimOptions } from "../../lib/ledger/sql/claim";

let db: TestDb;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db?.close());

const opts = (after: string): ClaimOptions => ({ owner: "w_window", limit: 20, perSubscription: 10, leaseSlackSeconds: 30, excludeSubscriptions: [], after });

describe("the claim's window of subscriptions", () => {
  it("moves past subscriptions whose queued rows are not due yet, so due rows behind them are claimed", async () => {
    // 60 subscriptions whose only rows are retries due in an hour, sorting before the 5 with due rows.
    const waiting = Array.from({ length: 60 }, (_, i) => `sub_a${String(i).padStart(3, "0")}`);
    const due = Array.from({ length: 5 }, (_, i) => `sub_z${i}`);
    for (const id of [...waiting, ...due]) await createSub(db.pool, { id, url: "http://127.0.0.1:9/hooks" });
    await seedEvents(db.pool, "evt_wait", 1, waiting);
    await db.pool.query("UPDATE deliveries SET state = 'scheduled', next_attempt_at = now() + interval '1 hour' WHERE subscription_id = ANY($1)", [waiting]);
    await seedEvents(db.pool, "evt_due", 3, due);

    let after = "";
    const claimed: string[] = [];
    // A window holds 20 subscriptions: three windows of waiting ones, then the due ones.
    for (let i = 0; i < 4; i++) {
      const out = await claimWindow(db.pool, opts(after));
      claimed.push(...out.claimed.map((r) => r.subscriptionId));
      after = out.after;
    }
    expect(claimed.sort()).toEqual(due.flatMap((s) => [s, s, s]).sort());
    await db.pool.query("DELETE FROM deliveries");
  });

  it("serves every subscription with due rows in turn: none twice before each has had one claim", async () => {
    const subs = Array.from({ length: 30 }, (_, i) => `sub_t${String(i).padStart(2, "0")}`);
    for (const id of subs) await createSub(db.pool, { id, url: "http://127.0.0.1:9/hooks" });
    await seedEvents(db.pool, "evt_turns", 5, subs);

    let after = "";
    const order: string[][] = [];
    for (let i = 0; i < 8; i++) {
      const out = await claimWindow(db.pool, opts(after));
      order.push([...new Set(out.claimed.map((r) => r.subscriptionId))]);
      after = out.after;
    }
    const served = order.flat();
    // 20 rows a claim, 5 due rows a subscription: 4 subscriptions a claim, each served once, in turn (the eighth takes the last 2).
    expect(order.map((o) => o.length)).toEqual([4, 4, 4, 4, 4, 4, 4, 2]);
    expect(served.slice(0, 30).sort()).toEqual([...subs].sort());
    expect(new Set(served.slice(0, 30)).size).toBe(30);
  });

  it("leaves paused, archived and excluded subscriptions out of the window", async () => {
    await db.pool.query("DELETE FROM deliveries");
    for (const id of ["sub_p_paused", "sub_p_archived", "sub_p_excluded", "sub_p_live"]) await createSub(db.pool, { id, url: "http://127.0.0.1:9/hooks" });
    await seedEvents(db.pool, "evt_p", 2, ["sub_p_paused", "sub_p_archived", "sub_p_excluded", "sub_p_live"]);
    await db.pool.query("UPDATE subscriptions SET state = 'paused' WHERE id = 'sub_p_paused'");
    await db.pool.query("UPDATE subscriptions SET archived_at = now(), archive_reason = 'test', archived_by = 'test' WHERE id = 'sub_p_archived'");
    const out = await claimWindow(db.pool, { ...opts(""), excludeSubscriptions: ["sub_p_excluded"] });
    expect(out.claimed.map((r) => r.subscriptionId)).toEqual(["sub_p_live", "sub_p_live"]);
  });

  it("reads a window's worth of counters and subscriptions, and counts in-flight rows only as far as the batch goes, however many are queued", async () => {
    await db.pool.query("DELETE FROM deliveries");
    const subs = Array.from({ length: 400 }, (_, i) => `sub_q${String(i).padStart(3, "0")}`);
    for (const id of subs) await createSub(db.pool, { id, url: "http://127.0.0.1:9/hooks" });
    await seedEvents(db.pool, "evt_q", 2, subs);
    // The earlier cases' counters, folded to nothing: what is left is the 400 queued subscriptions.
    await db.pool.query("SELECT hl_fold_delivery_state_counts()");
    await db.pool.query("ANALYZE");

    type PlanNode = { "Node Type": string; "Relation Name"?: string; "Actual Rows"?: number; "Actual Loops"?: number; Plans?: PlanNode[] };
    const flat = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(flat)];
    const c = await db.pool.connect();
    let plan: PlanNode[];
    try {
      await c.query("BEGIN");
      const text = `WITH ${claimCtes({ owner: "$1", limit: "$2", perSub: "$3", exclude: "$4", slack: "$5", answered: "$6", held: "$7", after: "$8" })} SELECT * FROM claimed`;
      const { rows } = await c.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, ["w_window", ...claimParams({ ...opts("sub_q100"), held: [] })]);
      plan = flat(rows[0]["QUERY PLAN"][0].Plan);
    } finally {
      await c.query("ROLLBACK");
      c.release();
    }
    const read = (rel: string) => plan.filter((n) => n["Relation Name"] === rel).reduce((sum, n) => sum + (n["Actual Rows"] ?? 0) * (n["Actual Loops"] ?? 0), 0);
    // 20 rows a claim at 2 a subscription: 10 subscriptions fill the batch, from a window of 20 of the 400 queued,
    // all after sub_q100, so the window's wrap-around range (from the first id) is not read.
    expect(read("delivery_state_counts")).toBeLessThanOrEqual(25);
    expect(plan.some((n) => n["Relation Name"] === "subscriptions" && n["Node Type"] === "Seq Scan")).toBe(false);
    expect(read("subscriptions")).toBeLessThanOrEqual(20 + 10);
    // The in-flight count runs once for each subscription the batch reached, not for the whole window.
    const inFlightLoops = Math.max(...plan.filter((n) => n["Node Type"] === "Aggregate").map((n) => n["Actual Loops"] ?? 0));
    expect(inFlightLoops).toBe(10);
    await db.pool.query("DELETE FROM deliveries");
  });
});

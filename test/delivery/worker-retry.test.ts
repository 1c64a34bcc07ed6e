// The retry design's sequences against a real worker, real Postgres and real
// local receivers. Ladders are shortened to seconds; jitter is off.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { attemptsOf, createSub, deliveryOf, seedEvents, settled, startDbRelay, startReceiver, waitFor, worker, type Receiver } from "../helpers/worker-helpers";
import { deliveryKey } from "../../lib/ledger/delivery-key";
import { generateSecret } from "../../lib/subscriptions/secrets";
import { updateSubscription } from "../../lib/subscriptions/manage-subscriptions";
import { SYSTEM } from "../../lib/auth/principal";
import type { DeliveryWorker } from "../../worker/worker";
import { USER_AGENT } from "../../lib/net/sender";
import { DELIVERIES_CHANNEL } from "../../lib/ledger/notify";

let db: TestDb;
let w: DeliveryWorker;
const receivers: Receiver[] = [];
const receiver = async (...args: Parameters<typeof startReceiver>) => {
  const r = await startReceiver(...args);
  receivers.push(r);
  return r;
};

beforeAll(async () => {
  db = await createTestDatabase();
  w = worker(db.url);
});
afterAll(async () => {
  await w?.stop();
  await Promise.all(receivers.map((r) => r.close()));
  await db?.close();
});

describe("delivery worker: sequences", () => {
  it("delivers signed, exact bytes with the documented headers", async () => {
    const [old, fresh] = [generateSecret(), generateSecret()];
    const r = await receiver();
    await createSub(db.pool, { id: "sub_sign", url: r.url, secrets: [fresh, old] });
    await seedEvents(db.pool, "evt_sign_", 1, ["sub_sign"]);
    const d = await settled(db.pool, "sub_sign", "evt_sign_1");
    expect(d.state).toBe("delivered");
    const got = r.received[0];
    const key = deliveryKey("sub_sign", "evt_sign_1");
    const stored = (await db.pool.query("SELECT payload FROM events WHERE id = 'evt_sign_1'")).rows[0].payload as Buffer;
    expect(got.body.equals(stored)).toBe(true);
    expect(got.headers["webhook-id"]).toBe(key);
    expect(got.headers["idempotency-key"]).toBe(key);
    expect(got.headers["content-type"]).toBe("application/json");
    expect(got.headers["user-agent"]).toBe(USER_AGENT);
    expect(Math.abs(Number(got.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(60);
    const sig = String(got.headers["webhook-signature"]);
    expect(sig.split(" ")).toHaveLength(2);
    const h = { "webhook-id": key, "webhook-timestamp": String(got.headers["webhook-timestamp"]), "webhook-signature": sig };
    // Rotation: both the old and the new secret verify, with an independent implementation.
    expect(() => new Webhook(old).verify(got.body, h)).not.toThrow();
    expect(() => new Webhook(fresh).verify(got.body, h)).not.toThrow();
    const attempts = await attemptsOf(db.pool, d.id);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ outcome: "delivered", status_code: 204, attempt_number: 1, trigger: "scheduled", ambiguous: false });
    expect(attempts[0].worker_id).toBe(w.workerId);
  });

  it("an expired secret no longer signs", async () => {
    const [live, expired] = [generateSecret(), generateSecret()];
    const r = await receiver();
    await createSub(db.pool, { id: "sub_expired", url: r.url, secrets: [live, expired] });
    await db.pool.query("UPDATE subscription_secrets SET expires_at = now() - interval '1 minute' WHERE id = 'sec_sub_expired_1'");
    await seedEvents(db.pool, "evt_exp_", 1, ["sub_expired"]);
    await settled(db.pool, "sub_expired", "evt_exp_1");
    expect(String(r.received[0].headers["webhook-signature"]).split(" ")).toHaveLength(1);
  });

  it("429 with Retry-After: 3, then 429, then 204: delivered on attempt 3, first delay 3 s, second from the ladder", async () => {
    let n = 0;
    const r = await receiver((_q, res) => {
      n++;
      if (n === 1) res.writeHead(429, { "retry-after": "3" }).end("slow down");
      else if (n === 2) res.writeHead(429).end();
      else res.writeHead(204).end();
    });
    await createSub(db.pool, { id: "sub_429", url: r.url, retryPolicy: { ladderSeconds: [1, 1, 1] } });
    await seedEvents(db.pool, "evt_429_", 1, ["sub_429"]);
    const d = await settled(db.pool, "sub_429", "evt_429_1", 30_000);
    expect(d.state).toBe("delivered");
    expect(d.attempt_count).toBe(3);
    const a = await attemptsOf(db.pool, d.id);
    expect(a.map((x) => [x.outcome, x.status_code, x.error_class])).toEqual([
      ["retry", 429, "http_429"],
      ["retry", 429, "http_429"],
      ["delivered", 204, null],
    ]);
    expect(a[0].retry_after_seconds).toBe(3);
    expect(a[0].response_excerpt).toBe("slow down");
    expect(a[0].response_headers["retry-after"]).toBe("3");
    expect(a[1].retry_after_seconds).toBeNull();
    const gap1 = r.received[1].at - r.received[0].at;
    const gap2 = r.received[2].at - r.received[1].at;
    expect(gap1).toBeGreaterThanOrEqual(2900);
    expect(gap2).toBeGreaterThanOrEqual(900);
    expect(gap2).toBeLessThan(2900); // the 1 s rung, not another Retry-After
  });

  it("429 with Retry-After holds the whole endpoint: its other deliveries wait out the window unsent, then all arrive", async () => {
    // A gateway closed for 2 s after its first request: anything inside the window is another 429.
    let closedUntil = 0;
    const r = await receiver((_q, res) => {
      const now = Date.now();
      if (closedUntil === 0) closedUntil = now + 2_000;
      if (now < closedUntil) res.writeHead(429, { "retry-after": String(Math.ceil((closedUntil - now) / 1000)) }).end("quota");
      else res.writeHead(204).end();
    });
    await createSub(db.pool, { id: "sub_429_hold", url: r.url, maxConcurrency: 1, retryPolicy: { ladderSeconds: [1, 1, 1] } });
    await seedEvents(db.pool, "evt_429h_", 5, ["sub_429_hold"]);
    for (let i = 1; i <= 5; i++) expect((await settled(db.pool, "sub_429_hold", `evt_429h_${i}`, 30_000)).state).toBe("delivered");
    const answers = (await db.pool.query("SELECT status_code FROM attempts WHERE subscription_id = 'sub_429_hold' ORDER BY started_at, id")).rows.map(
      (x) => x.status_code,
    );
    // One 429 taught the worker to wait: the other four were not sent into the closed window to spend attempts on it.
    expect(answers.filter((s) => s === 429)).toHaveLength(1);
    expect(answers.filter((s) => s === 204)).toHaveLength(5);
    expect(r.received.filter((q) => q.at < closedUntil)).toHaveLength(1);
  });

  it("timeout then 204: delivered, the first attempt recorded as ambiguous", async () => {
    let n = 0;
    const r = await receiver((_q, res) => {
      if (++n === 1) return; // never answers
      res.writeHead(204).end();
    });
    await createSub(db.pool, { id: "sub_timeout", url: r.url, retryPolicy: { ladderSeconds: [1], timeoutMs: 500 } });
    await seedEvents(db.pool, "evt_to_", 1, ["sub_timeout"]);
    const d = await settled(db.pool, "sub_timeout", "evt_to_1");
    expect(d.state).toBe("delivered");
    const a = await attemptsOf(db.pool, d.id);
    expect(a).toHaveLength(2);
    expect(a[0]).toMatchObject({ outcome: "retry", error_class: "timeout", ambiguous: true, status_code: null });
    expect(a[1]).toMatchObject({ outcome: "delivered", ambiguous: false });
    expect(r.received[0].id).toBe(r.received[1].id);
  });

  it("422: dead-lettered after one attempt with its reason", async () => {
    const r = await receiver((_q, res) => res.writeHead(422, { "content-type": "application/json" }).end('{"error":"score must be an integer"}'));
    await createSub(db.pool, { id: "sub_422", url: r.url });
    await seedEvents(db.pool, "evt_422_", 1, ["sub_422"]);
    const d = await settled(db.pool, "sub_422", "evt_422_1");
    expect(d).toMatchObject({ state: "dead_letter", dead_letter_reason: "permanent", last_status_code: 422, last_error_class: "http_4xx", attempt_count: 1 });
    expect(d.dead_lettered_at).not.toBeNull();
    const a = await attemptsOf(db.pool, d.id);
    expect(a).toHaveLength(1);
    expect(a[0]).toMatchObject({ outcome: "dead_letter", response_excerpt: '{"error":"score must be an integer"}' });
  });

  it("a 3xx is not followed: dead-lettered as a refused redirect", async () => {
    const r = await receiver((_q, res) => res.writeHead(302, { location: "http://127.0.0.1:1/elsewhere" }).end());
    await createSub(db.pool, { id: "sub_302", url: r.url });
    await seedEvents(db.pool, "evt_302_", 1, ["sub_302"]);
    const d = await settled(db.pool, "sub_302", "evt_302_1");
    expect(d).toMatchObject({ state: "dead_letter", dead_letter_reason: "permanent", last_error_class: "redirect", last_status_code: 302 });
    expect(r.received).toHaveLength(1);
  });

  it("410: dead-lettered as gone and the subscription disabled, audited with the system as actor", async () => {
    const r = await receiver((_q, res) => res.writeHead(410).end());
    await createSub(db.pool, { id: "sub_410", url: r.url });
    await seedEvents(db.pool, "evt_410_", 1, ["sub_410"]);
    const d = await settled(db.pool, "sub_410", "evt_410_1");
    expect(d).toMatchObject({ state: "dead_letter", dead_letter_reason: "gone", last_error_class: "http_410" });
    const s = (await db.pool.query("SELECT state, state_reason FROM subscriptions WHERE id = 'sub_410'")).rows[0];
    expect(s.state).toBe("disabled");
    expect(s.state_reason).toMatch(/410/);
    const audit = (await db.pool.query("SELECT * FROM audit_entries WHERE target_id = 'sub_410'")).rows;
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor: "system", action: "subscription.disable", target_type: "subscription" });
    expect(audit[0].details.deliveryId).toBe(d.id);
    // Later deliveries are held, not sent and not dropped.
    await seedEvents(db.pool, "evt_410_more_", 2, ["sub_410"]);
    await new Promise((res) => setTimeout(res, 800));
    expect(r.received).toHaveLength(1);
    expect((await deliveryOf(db.pool, "sub_410", "evt_410_more_1")).state).toBe("pending");
  });

  it("503 until the ladder ends: dead-lettered as exhausted", async () => {
    const r = await receiver((_q, res) => res.writeHead(503).end("down for maintenance"));
    await createSub(db.pool, { id: "sub_503", url: r.url, retryPolicy: { ladderSeconds: [1, 1] } });
    await seedEvents(db.pool, "evt_503_", 1, ["sub_503"]);
    const d = await settled(db.pool, "sub_503", "evt_503_1", 30_000);
    expect(d).toMatchObject({ state: "dead_letter", dead_letter_reason: "exhausted", last_status_code: 503, last_error_class: "http_5xx", attempt_count: 3 });
    const a = await attemptsOf(db.pool, d.id);
    expect(a.map((x) => x.outcome)).toEqual(["retry", "retry", "dead_letter"]);
    expect(r.received).toHaveLength(3);
  });

  it("per-subscription classify overrides: 409 retried, then delivered", async () => {
    let n = 0;
    const r = await receiver((_q, res) => res.writeHead(++n === 1 ? 409 : 200).end());
    await createSub(db.pool, { id: "sub_409", url: r.url, retryPolicy: { ladderSeconds: [1], classify: { "409": "retry" } } });
    await seedEvents(db.pool, "evt_409_", 1, ["sub_409"]);
    const d = await settled(db.pool, "sub_409", "evt_409_1");
    expect(d.state).toBe("delivered");
    expect((await attemptsOf(db.pool, d.id)).map((x) => x.error_class)).toEqual(["http_409".replace("409", "4xx"), null]);
  });

  it("a receiver that commits and then drops the connection: retried with the same webhook-id, applied once", async () => {
    const applied = new Map<string, number>();
    const r = await receiver((req, res) => {
      const id = String(req.headers["webhook-id"]);
      const first = !applied.has(id);
      if (first) {
        applied.set(id, 1); // committed the grade...
        req.socket.destroy(); // ...and the old PHP handler died before answering
        return;
      }
      res.writeHead(200).end("duplicate ignored");
    });
    await createSub(db.pool, { id: "sub_drop", url: r.url, retryPolicy: { ladderSeconds: [1] } });
    await seedEvents(db.pool, "evt_drop_", 1, ["sub_drop"]);
    const d = await settled(db.pool, "sub_drop", "evt_drop_1");
    expect(d.state).toBe("delivered");
    expect(r.received).toHaveLength(2);
    expect(r.received[0].id).toBe(r.received[1].id);
    expect(r.received[0].id).toBe(d.delivery_key);
    expect([...applied.values()]).toEqual([1]);
    const a = await attemptsOf(db.pool, d.id);
    expect(a[0]).toMatchObject({ outcome: "retry", error_class: "reset", ambiguous: true });
    expect(a[1]).toMatchObject({ outcome: "delivered", status_code: 200 });
  });

  it("connection refused is retried and not ambiguous", async () => {
    const r = await receiver();
    const url = r.url;
    await r.close();
    await createSub(db.pool, { id: "sub_refused", url, retryPolicy: { ladderSeconds: [60] } });
    await seedEvents(db.pool, "evt_ref_", 1, ["sub_refused"]);
    const d = await waitFor(async () => {
      const x = await deliveryOf(db.pool, "sub_refused", "evt_ref_1");
      return x.state === "scheduled" ? x : null;
    });
    expect(d).toMatchObject({ last_error_class: "connect_refused", attempt_count: 1 });
    const a = await attemptsOf(db.pool, d.id);
    expect(a[0]).toMatchObject({ outcome: "retry", ambiguous: false });
    expect(new Date(d.next_attempt_at).getTime() - Date.now()).toBeGreaterThan(40_000);
  });

  it("a paused subscription's deliveries stay held and go out after resume", async () => {
    const r = await receiver();
    await createSub(db.pool, { id: "sub_paused", url: r.url, state: "paused" });
    await seedEvents(db.pool, "evt_pause_", 5, ["sub_paused"]);
    await new Promise((res) => setTimeout(res, 1000));
    expect(r.received).toHaveLength(0);
    const held = await db.pool.query("SELECT state, count(*)::int AS n FROM deliveries WHERE subscription_id = 'sub_paused' GROUP BY state");
    expect(held.rows).toEqual([{ state: "pending", n: 5 }]);
    await updateSubscription(db.prisma, "sub_paused", { state: "active" }, SYSTEM);
    await waitFor(async () => r.received.length === 5, 10_000, "5 deliveries after resume");
    const after = await db.pool.query("SELECT state, count(*)::int AS n FROM deliveries WHERE subscription_id = 'sub_paused' GROUP BY state");
    await waitFor(async () => {
      const x = await db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE subscription_id = 'sub_paused' AND state = 'delivered'");
      return x.rows[0].n === 5;
    });
    void after;
  });

  it("copies next_trigger/next_actor into the attempt and resets them (the redrive contract)", async () => {
    const r = await receiver();
    await createSub(db.pool, { id: "sub_redrive", url: r.url });
    await seedEvents(db.pool, "evt_rd_", 1, ["sub_redrive"]);
    const first = await settled(db.pool, "sub_redrive", "evt_rd_1");
    // What the redrive engineer does: due again, new run, provenance on the row, NOTIFY.
    await db.pool.query(
      `UPDATE deliveries SET state = 'pending', attempt_count = 0, run_started_at = now(), next_attempt_at = now(),
              next_trigger = 'redrive', next_actor = 'user:eng@example.com', dead_letter_reason = NULL, dead_lettered_at = NULL
        WHERE id = $1`,
      [first.id],
    );
    await db.pool.query("SELECT pg_notify($1, '')", [DELIVERIES_CHANNEL]);
    await waitFor(async () => (await attemptsOf(db.pool, first.id)).length === 2);
    const d = await settled(db.pool, "sub_redrive", "evt_rd_1");
    expect(d).toMatchObject({ next_trigger: "scheduled", next_actor: null, attempt_count: 1, total_attempts: 2 });
    const a = await attemptsOf(db.pool, d.id);
    expect(a[1]).toMatchObject({ attempt_number: 2, trigger: "redrive", actor: "user:eng@example.com" });
    expect(r.received.map((x) => x.id)).toEqual([d.delivery_key, d.delivery_key]);
  });

  it("the per-subscription concurrency cap holds", async () => {
    let open = 0;
    let peak = 0;
    const r = await receiver(async (_q, res) => {
      open++;
      peak = Math.max(peak, open);
      await new Promise((x) => setTimeout(x, 30));
      open--;
      res.writeHead(204).end();
    });
    await createSub(db.pool, { id: "sub_cap", url: r.url, maxConcurrency: 3 });
    await seedEvents(db.pool, "evt_cap_", 40, ["sub_cap"]);
    await waitFor(async () => {
      const x = await db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE subscription_id = 'sub_cap' AND state = 'delivered'");
      return x.rows[0].n === 40;
    });
    expect(peak).toBeLessThanOrEqual(3);
    expect(peak).toBeGreaterThanOrEqual(2);
  });

  it("a prefetched row held past half the lease slack is released unsent, not sent on a lease that would run out mid-send", async () => {
    // Lease = timeout 5 s + slack 3 s (FAST). The row claimed behind the first request waits for it
    // ~4.5 s, more than half the slack: sent then, its own 4.5 s request would end past its lease and
    // the reaper would hand it to a second send. Released instead, it is claimed again and sent once.
    const r = await receiver(async (_q, res) => {
      await new Promise((x) => setTimeout(x, 4_500));
      res.writeHead(204).end();
    });
    await createSub(db.pool, { id: "sub_held", url: r.url, maxConcurrency: 1, retryPolicy: { timeoutMs: 5_000 } });
    await seedEvents(db.pool, "evt_held_", 2, ["sub_held"]);
    // Both leased at once with max_concurrency 1: the second is held, not on the wire.
    await waitFor(
      async () => (await db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE subscription_id = 'sub_held' AND state = 'in_flight'")).rows[0].n === 2,
      4_000,
      "the second delivery prefetched while the first is on the wire",
    );
    expect(r.received).toHaveLength(1);
    await waitFor(
      async () => (await db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE subscription_id = 'sub_held' AND state = 'delivered'")).rows[0].n === 2,
      30_000,
      "both delivered",
    );
    expect(r.received.map((x) => r.count(x.id))).toEqual([1, 1]);
    const { rows } = await db.pool.query("SELECT outcome, count(*)::int AS n FROM attempts WHERE subscription_id = 'sub_held' GROUP BY 1");
    expect(rows).toEqual([{ outcome: "delivered", n: 2 }]);
  }, 45_000);

  it("losing the database connections: the worker reconnects and keeps delivering", async () => {
    const r = await receiver();
    await createSub(db.pool, { id: "sub_reconnect", url: r.url });
    await db.pool.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'hookledger-worker%'");
    await seedEvents(db.pool, "evt_rc_", 3, ["sub_reconnect"]);
    await waitFor(
      async () => {
        const x = await db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE subscription_id = 'sub_reconnect' AND state = 'delivered'");
        return x.rows[0].n === 3;
      },
      30_000,
      "delivery after reconnect",
    );
    // LISTEN came back too: a NOTIFY wakes the worker well before a long poll would.
    const listening = await waitFor(
      async () => {
        const x = await db.pool.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'hookledger-worker-listen'",
        );
        return x.rows[0].n === 1;
      },
      30_000,
      "LISTEN reconnected",
    );
    expect(listening).toBe(true);
  });

  it("a heartbeat row is kept", async () => {
    const hb = (await db.pool.query("SELECT * FROM worker_heartbeats WHERE worker_id = $1", [w.workerId])).rows[0];
    expect(hb.stopped_at).toBeNull();
    expect(Date.now() - new Date(hb.beat_at).getTime()).toBeLessThan(10_000);
  });
});

describe("delivery worker: shutdown without the database", () => {
  it("is bounded by the grace period and a short last write, not by retries against a database that is gone", async () => {
    const own = await createTestDatabase(); // its own database: the shared worker above must not take this delivery
    const relay = await startDbRelay(own.url);
    const r = await receiver(async (_req, res) => {
      await new Promise((x) => setTimeout(x, 1_000));
      res.writeHead(204).end();
    });
    const lone = worker(relay.url, { shutdownGraceMs: 3_000 });
    try {
      await createSub(own.pool, { id: "sub_db_gone", url: r.url });
      await seedEvents(own.pool, "evt_db_gone_", 1, ["sub_db_gone"]);
      await waitFor(async () => r.received.length === 1, 20_000, "the request on the wire");
      await relay.cut(); // Postgres is gone for this worker; its answer arrives a moment later
      const t0 = Date.now();
      await lone.stop();
      // Grace (3 s) + the last write (3 s) + the release attempts, refused at once. Retrying each write
      // with backoff, as before, took over 30 s.
      expect(Date.now() - t0).toBeLessThan(9_000);
    } finally {
      await lone.stop();
      await own.close();
    }
  }, 60_000);
});

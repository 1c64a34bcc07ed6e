// Shared by test/worker-*.test.ts and test/security/ssrf.test.ts: real local receivers,
// subscriptions and deliveries written straight to the ledger, an in-process worker.
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import type pg from "pg";
import { generateSecret, sealSecret } from "../../lib/subscriptions/secrets";
import { seedEventsFanOut } from "../../lib/ledger/sql/seed";
import { startWorker, type DeliveryWorker } from "../../worker/worker";
import type { WorkerOptions } from "../../worker/config";
import type { ClaimedRow } from "../../lib/ledger/sql/claim";
import type { AttemptResult } from "../../lib/ledger/sql/write-results";

export type Received = { headers: http.IncomingHttpHeaders; body: Buffer; at: number; id: string };
export type Receiver = {
  url: string;
  port: number;
  received: Received[];
  count: (id: string) => number;
  close: () => Promise<void>;
};

/** A node:http receiver on 127.0.0.1; `handle` answers (default 204). */
export async function startReceiver(
  handle: (req: http.IncomingMessage, res: http.ServerResponse, r: Received) => unknown = (_q, res) => {
    res.statusCode = 204;
    res.end();
  },
): Promise<Receiver> {
  const received: Received[] = [];
  const counts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const id = String(req.headers["webhook-id"] ?? "");
      const r = { headers: req.headers, body: Buffer.concat(chunks), at: Date.now(), id };
      received.push(r);
      counts.set(id, (counts.get(id) ?? 0) + 1);
      void Promise.resolve(handle(req, res, r)).catch(() => res.destroy());
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    port,
    received,
    count: (id) => counts.get(id) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function createSub(
  pool: pg.Pool,
  s: {
    id: string;
    url: string;
    retryPolicy?: Record<string, unknown>;
    state?: string;
    maxConcurrency?: number;
    rateLimitPerSecond?: number | null;
    secrets?: string[];
    eventTypes?: string[];
  },
): Promise<{ secrets: string[] }> {
  const secrets = s.secrets ?? [generateSecret()];
  await pool.query(
    `INSERT INTO subscriptions (id, name, url, event_types, state, retry_policy, max_concurrency, rate_limit_per_second)
     VALUES ($1, $1, $2, $3, $4, $5, $6, $7)`,
    [s.id, s.url, s.eventTypes ?? ["assignment.graded"], s.state ?? "active", JSON.stringify(s.retryPolicy ?? {}), s.maxConcurrency ?? 10, s.rateLimitPerSecond ?? null],
  );
  for (const [i, sec] of secrets.entries())
    await pool.query("INSERT INTO subscription_secrets (id, subscription_id, secret, created_at) VALUES ($1, $2, $3, now() - make_interval(secs => $4))", [
      `sec_${s.id}_${i}`,
      s.id,
      sealSecret(sec, { id: `sec_${s.id}_${i}`, subscriptionId: s.id }),
      i,
    ]);
  return { secrets };
}

/**
 * `n` events of one type, each fanned out to every given subscription, in one
 * statement through the ledger's enqueue (bulk seeding; the API path is
 * covered by test/events/ingest.test.ts).
 */
export async function seedEvents(pool: pg.Pool, prefix: string, n: number, subscriptionIds: string[], tenant: string | null = null): Promise<void> {
  await seedEventsFanOut(pool, prefix, n, subscriptionIds, tenant);
}

export const FAST: Partial<WorkerOptions> = {
  pollIntervalMs: 100,
  leaseSlackMs: 3_000,
  reapIntervalMs: 250,
  heartbeatIntervalMs: 500,
  shutdownGraceMs: 2_000,
  allowPrivateTargets: true,
  handleSignals: false,
  random: () => 0.5, // no jitter: 1 - 0.2 + 0.4 * 0.5 = 1
};

export function worker(url: string, opts: Partial<WorkerOptions> = {}): DeliveryWorker {
  return startWorker({ databaseUrl: url, ...FAST, ...opts });
}

export async function waitFor<T>(fn: () => Promise<T | null | undefined | false>, timeoutMs = 20_000, what = "condition"): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function deliveryOf(pool: pg.Pool, subscriptionId: string, eventId: string) {
  const { rows } = await pool.query("SELECT * FROM deliveries WHERE subscription_id = $1 AND event_id = $2", [subscriptionId, eventId]);
  return rows[0];
}

export async function attemptsOf(pool: pg.Pool, deliveryId: string) {
  const { rows } = await pool.query("SELECT * FROM attempts WHERE delivery_id = $1 ORDER BY attempt_number", [deliveryId]);
  return rows;
}

export async function settled(pool: pg.Pool, subscriptionId: string, eventId: string, timeoutMs = 20_000) {
  return waitFor(
    async () => {
      const d = await deliveryOf(pool, subscriptionId, eventId);
      return d && (d.state === "delivered" || d.state === "dead_letter") ? d : null;
    },
    timeoutMs,
    `${subscriptionId}/${eventId} to be delivered or dead-lettered`,
  );
}

/**
 * A TCP relay to the test database on `port` (0: any free one): a worker given
 * `url` reaches Postgres only through it, so `cut()` takes the database away
 * from that worker alone (open connections dropped, new ones refused).
 */
export async function startDbRelay(dbUrl: string, port = 0): Promise<{ url: string; port: number; cut: () => Promise<void> }> {
  const target = new URL(dbUrl);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => {});
      s.on("close", () => (client.destroy(), upstream.destroy(), sockets.delete(s)));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const via = new URL(dbUrl);
  via.hostname = "127.0.0.1";
  via.port = String((server.address() as AddressInfo).port);
  return {
    url: via.toString(),
    port: Number(via.port),
    cut: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The result of a claimed row answered 204 at once (for writing results by hand). */
export function delivered(row: ClaimedRow): AttemptResult {
  return {
    id: row.id,
    eventAt: row.eventAt,
    claimToken: row.claimToken,
    state: "delivered",
    nextAttemptAt: null,
    statusCode: 204,
    errorClass: null,
    errorMessage: null,
    deadLetterReason: null,
    startedAt: new Date(),
    durationMs: 3,
    retryAfterSeconds: null,
    responseHeaders: null,
    responseExcerpt: null,
    ambiguous: false,
    trigger: row.trigger,
    actor: row.actor,
  };
}

/** The result of a claimed row answered 503, its retry due at `nextAttemptAt`. */
export const retried503 = (row: ClaimedRow, nextAttemptAt: Date): AttemptResult => ({
  ...delivered(row),
  state: "scheduled",
  nextAttemptAt,
  statusCode: 503,
  errorClass: "http_5xx",
  errorMessage: "HTTP 503",
});

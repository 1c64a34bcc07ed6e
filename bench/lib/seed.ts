// Writing the ledger fast, in SQL, through lib/ledger (published first, fast,
// not through the HTTP API). The rows are what publishEvent writes: the stored
// envelope bytes, the delivery keys, one delivery per (event, subscription).
import pg from "pg";
import { seedFixtureDeliveries, seedRoundRobin } from "../../lib/ledger/sql/seed";
import { wakeWorkers } from "../../lib/ledger/sql/enqueue";
import { generateSecret, sealSecret } from "../../lib/subscriptions/secrets";

export type SubSpec = {
  id: string;
  url: string;
  state?: "active" | "paused";
  tenant?: string | null;
  maxConcurrency?: number;
  retryPolicy?: Record<string, unknown>;
  eventTypes?: string[];
};

export async function createSubs(db: pg.Pool, subs: SubSpec[]): Promise<void> {
  for (const s of subs) {
    await db.query(
      `INSERT INTO subscriptions (id, name, tenant, url, event_types, state, retry_policy, max_concurrency)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        s.id,
        `District ${s.id}`,
        s.tenant ?? null,
        s.url,
        s.eventTypes ?? ["assignment.graded"],
        s.state ?? "active",
        JSON.stringify(s.retryPolicy ?? {}),
        s.maxConcurrency ?? 10,
      ],
    );
    await db.query("INSERT INTO subscription_secrets (id, subscription_id, secret) VALUES ($1, $2, $3)", [
      `sec_${s.id}`,
      s.id,
      sealSecret(generateSecret(), { id: `sec_${s.id}`, subscriptionId: s.id }),
    ]);
  }
}

/**
 * `count` events `<prefix><n>`, event n going to subscription n mod len(subs)
 * (one district per event: the bench's subscriptions are tenant-scoped to
 * their own id), each with an envelope of about `payloadBytes` bytes. Pending
 * deliveries due now are enqueued through the ledger's one enqueue path;
 * another `state` or a due offset (`dueOffsetSql`, an SQL expression over g,
 * the event number) is written as fixture rows (lib/ledger/sql/seed.ts).
 */
export async function seedDeliveries(
  db: pg.Pool,
  opts: {
    prefix: string;
    count: number;
    subs: string[];
    payloadBytes?: number;
    state?: "pending" | "scheduled" | "dead_letter";
    dueOffsetSql?: string;
    eventType?: string;
    attemptCount?: number;
    chunk?: number;
  },
): Promise<void> {
  const eventType = opts.eventType ?? "assignment.graded";
  const padBytes = Math.max(0, (opts.payloadBytes ?? 1024) - 150);
  const chunk = opts.chunk ?? 50_000;
  const fixture = (opts.state ?? "pending") !== "pending" || opts.dueOffsetSql !== undefined || (opts.attemptCount ?? 0) > 0;
  for (let from = 1; from <= opts.count; from += chunk) {
    const to = Math.min(opts.count, from + chunk - 1);
    const o = { prefix: opts.prefix, from, to, subs: opts.subs, eventType, padBytes };
    if (fixture)
      await seedFixtureDeliveries(db, { ...o, state: opts.state ?? "pending", attemptCount: opts.attemptCount ?? 0, dueOffsetSql: opts.dueOffsetSql ?? "interval '0'" });
    else await seedRoundRobin(db, o);
  }
  await wakeWorkers(db); // fixtures do not NOTIFY
}

/** Deliveries of these subscriptions in `state`, from the trigger-kept counters (no scan of the queue). */
export async function countState(db: pg.Pool, state: string, subs?: string[]): Promise<number> {
  const { rows } = await db.query(
    `SELECT coalesce(sum(n), 0)::bigint AS n FROM delivery_state_counts WHERE state = $1 AND ($2::text[] IS NULL OR subscription_id = ANY($2))`,
    [state, subs ?? null],
  );
  return Number(rows[0].n);
}

/** Polls `fn` every `everyMs` until it returns true or `timeoutMs` passes; false on timeout. */
export async function pollUntil(fn: () => Promise<boolean>, timeoutMs: number, everyMs = 100): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await fn()) return true;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return fn();
}

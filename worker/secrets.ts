// The worker's signing secrets: loaded per subscription from the ledger,
// opened, cached for a few seconds (a rotation reaches the worker within
// SECRET_TTL_MS), and reloaded while the database is away rather than ever
// sending a request unsigned. The endpoint's authentication (its headers and
// client certificate) is loaded and cached with them, so a request never
// goes out without what the endpoint was configured to receive.
import type pg from "pg";
import type { Logger } from "pino";
import { openSecret } from "../lib/subscriptions/secrets";
import { openEndpointAuth, type EndpointAuth } from "../lib/subscriptions/endpoint-auth";
import { dbBackoff } from "../lib/db/wait";

const SECRET_TTL_MS = 5_000;

export type StoredSecret = { id: string; subscriptionId: string; secret: string };

/** Stored (sealed) secrets that are still valid, newest first, per subscription. */
export async function activeSecrets(db: pg.Pool | pg.PoolClient, subscriptionIds: string[]): Promise<Map<string, StoredSecret[]>> {
  const { rows } = await db.query<StoredSecret>(
    `SELECT id, subscription_id AS "subscriptionId", secret FROM subscription_secrets
      WHERE subscription_id = ANY($1::text[]) AND (expires_at IS NULL OR expires_at > now())
      ORDER BY created_at DESC, id`,
    [subscriptionIds],
  );
  const out = new Map<string, StoredSecret[]>(subscriptionIds.map((id) => [id, []]));
  for (const r of rows) out.get(r.subscriptionId)!.push(r);
  return out;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Sealed endpoint authentication of each subscription (NULL columns: none). */
async function sealedEndpointAuth(db: pg.Pool | pg.PoolClient, subscriptionIds: string[]) {
  const { rows } = await db.query<{ id: string; headers: string | null; tls: string | null }>(
    `SELECT id, endpoint_headers AS headers, endpoint_tls AS tls FROM subscriptions WHERE id = ANY($1::text[])`,
    [subscriptionIds],
  );
  return new Map(rows.map((r) => [r.id, r]));
}

/** A subscription's opened endpoint authentication, or why it could not be opened. */
export type EndpointEntry = { auth: EndpointAuth; error?: undefined } | { auth?: undefined; error: string };

export class SecretsCache {
  private readonly secrets = new Map<string, { at: number; plain: string[] }>();
  private readonly endpoints = new Map<string, EndpointEntry>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly log: Logger,
  ) {}

  /** The cached secrets of a subscription, if any were loaded (an empty list counts as none). */
  cached(subscriptionId: string): string[] | undefined {
    const plain = this.secrets.get(subscriptionId)?.plain;
    return plain && plain.length > 0 ? plain : undefined;
  }

  /** The endpoint authentication loaded with the subscription's secrets (undefined until they were loaded). */
  endpoint(subscriptionId: string): EndpointEntry | undefined {
    return this.endpoints.get(subscriptionId);
  }

  /** Loads the secrets of the subscriptions whose cache entry is missing or older than the TTL. */
  async refresh(subscriptionIds: Iterable<string>): Promise<void> {
    const now = Date.now();
    const stale = [...new Set(subscriptionIds)].filter((id) => {
      const s = this.secrets.get(id);
      return !s || now - s.at > SECRET_TTL_MS;
    });
    if (stale.length === 0) return;
    try {
      const [stored, sealed] = await Promise.all([activeSecrets(this.pool, stale), sealedEndpointAuth(this.pool, stale)]);
      for (const id of stale) {
        const s = sealed.get(id);
        try {
          this.endpoints.set(id, { auth: openEndpointAuth(id, { headers: s?.headers ?? null, tls: s?.tls ?? null }) });
        } catch (err) {
          // The message names the subscription and the key, never a value.
          this.endpoints.set(id, { error: (err as Error).message });
        }
      }
      for (const [id, list] of stored) this.secrets.set(id, { at: now, plain: await Promise.all(list.map((s) => openSecret(s.secret, s))) });
    } catch (err) {
      // Claimed rows still go out with the cached secrets, or unsigned never: a row without any is held to its lease.
      this.log.warn({ err: (err as Error).message }, "could not load signing secrets");
    }
  }

  /**
   * The subscription's signing secrets, reloading while the database is away
   * (the chaos suite caught requests sent unsigned when a claim was followed by
   * a Postgres restart before the secrets were read). Empty only when they
   * could not be had before shutdown or within ~20 s.
   */
  async get(subscriptionId: string, signal: AbortSignal): Promise<string[]> {
    for (let i = 1; ; i++) {
      const cached = this.cached(subscriptionId);
      if (cached) return cached;
      // At most ~20 s in all: well inside the lease (timeout + 30 s slack), so a
      // row given up on here is not being sent by another worker yet.
      if (signal.aborted || i > 10) return [];
      await sleep(Math.min(2_000, dbBackoff(i)));
      this.secrets.delete(subscriptionId);
      await this.refresh([subscriptionId]);
    }
  }
}

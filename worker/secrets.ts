// The worker's signing secrets: loaded per subscription from the ledger,
// opened, cached for a few seconds (a rotation reaches the worker within
// SECRET_TTL_MS), and reloaded while the database is away rather than ever
// sending a request unsigned. The endpoint's authentication (its headers and
// client certificate) is loaded and cached with them, so a request never
// goes out without what the endpoint was configured to receive. It is cached
// together with the URL and version it was read with, and used only for a row
// claimed under that same version: a credential is sent to the URL it was
// saved for, never to one the claim read later (a URL moved to another host
// would otherwise receive the old Authorization value until the cache
// expired).
import type pg from "pg";
import type { Logger } from "pino";
import { openSecret } from "../lib/subscriptions/secrets";
import { openEndpointAuth, type EndpointAuth } from "../lib/subscriptions/endpoint-auth";
import { dbBackoff } from "../lib/db/wait";

const SECRET_TTL_MS = 5_000;

type StoredSecret = { id: string; subscriptionId: string; secret: string };

/** Stored (sealed) secrets that are still valid, newest first, per subscription. */
async function activeSecrets(db: pg.Pool | pg.PoolClient, subscriptionIds: string[]): Promise<Map<string, StoredSecret[]>> {
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

/**
 * Sealed endpoint authentication of each subscription (NULL columns: none),
 * with the URL and version (updated_at, as the claim returns it:
 * lib/ledger/sql/claim.ts) of the same row read, so the three always belong
 * together.
 */
async function sealedEndpointAuth(db: pg.Pool | pg.PoolClient, subscriptionIds: string[]) {
  const { rows } = await db.query<{ id: string; url: string; version: string; headers: string | null; tls: string | null }>(
    `SELECT id, url, updated_at::text AS version, endpoint_headers AS headers, endpoint_tls AS tls FROM subscriptions WHERE id = ANY($1::text[])`,
    [subscriptionIds],
  );
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * A subscription's opened endpoint authentication (or why it could not be
 * opened), with the URL and version it was read with: the URL it may be sent
 * to.
 */
export type EndpointEntry = { url: string; version: string } & ({ auth: EndpointAuth; error?: undefined } | { auth?: undefined; error: string });

/** What a claimed row says of its subscription (lib/ledger/sql/claim.ts ClaimedRow). */
export type ClaimedSubscription = { subscriptionId: string; url: string; subscriptionVersion: string };

const matches = (e: EndpointEntry | undefined, row: ClaimedSubscription) => e !== undefined && e.version === row.subscriptionVersion && e.url === row.url;

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

  /**
   * Loads the secrets and endpoint authentication of the claimed rows'
   * subscriptions whose cache entry is missing, older than the TTL, or read
   * under another URL or version than the claim's (a change reaches the next
   * claim at once, not after the TTL).
   */
  async refresh(rows: Iterable<ClaimedSubscription>): Promise<void> {
    const now = Date.now();
    const stale = new Set<string>();
    for (const row of rows) {
      const s = this.secrets.get(row.subscriptionId);
      if (!s || now - s.at > SECRET_TTL_MS || !matches(this.endpoints.get(row.subscriptionId), row)) stale.add(row.subscriptionId);
    }
    if (stale.size > 0) await this.load([...stale]);
  }

  /** Reads and opens the subscriptions' secrets and endpoint authentication: what was read, or null when the database could not be read. */
  private async load(ids: string[]): Promise<Map<string, EndpointEntry> | null> {
    const now = Date.now();
    try {
      const [stored, sealed] = await Promise.all([activeSecrets(this.pool, ids), sealedEndpointAuth(this.pool, ids)]);
      const read = new Map<string, EndpointEntry>();
      for (const id of ids) {
        const s = sealed.get(id);
        if (!s) {
          this.endpoints.delete(id);
          continue;
        }
        let entry: EndpointEntry;
        try {
          entry = { url: s.url, version: s.version, auth: openEndpointAuth(id, { headers: s.headers, tls: s.tls }) };
        } catch (err) {
          // The message names the subscription and the key, never a value.
          entry = { url: s.url, version: s.version, error: (err as Error).message };
        }
        this.endpoints.set(id, entry);
        read.set(id, entry);
      }
      for (const [id, list] of stored) this.secrets.set(id, { at: now, plain: await Promise.all(list.map((s) => openSecret(s.secret, s))) });
      return read;
    } catch (err) {
      // Claimed rows still go out with the cached secrets, or unsigned never: a row without any is held to its lease.
      this.log.warn({ err: (err as Error).message }, "could not load signing secrets");
      return null;
    }
  }

  /**
   * The endpoint authentication a claimed row goes out with, and the URL it
   * goes to (`entry.url`). The cached entry serves when it was read under the
   * row's own URL and version. Otherwise the subscription changed between the
   * two reads, and it is read again now: that read follows the claim, so it
   * is the subscription as it stands, and the row goes to the URL read with
   * these credentials, never to the claim's with them. Undefined when the
   * database could not be read before shutdown or within a few seconds (the
   * row is then held to its lease, as one without a signing secret).
   */
  async endpointFor(row: ClaimedSubscription, signal: AbortSignal): Promise<EndpointEntry | undefined> {
    const cached = this.endpoints.get(row.subscriptionId);
    if (matches(cached, row)) return cached;
    for (let i = 1; ; i++) {
      // This read's own result, not the map's: another read, begun before the claim, may land in the map after it.
      const read = await this.load([row.subscriptionId]);
      if (read) return read.get(row.subscriptionId);
      // A few seconds: get() may have waited its ~20 s already, and both together stay inside the lease (timeout + 30 s slack).
      if (signal.aborted || i >= 5) return undefined;
      await sleep(Math.min(2_000, dbBackoff(i)));
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
      await this.load([subscriptionId]);
    }
  }
}

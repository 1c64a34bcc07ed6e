// What every system in the peer comparison does per job, and the child-process
// harness the peers run in. One job is one webhook: the 1 KB envelope the
// drain's backlog holds (lib/ledger/sql/seed.ts writes the same shape), signed
// the Standard Webhooks way with the endpoint's secret and POSTed with undici
// over keep-alive connections to the bench's receiver; a 2xx is done, anything
// else throws so that the queue's own retry takes over.
import { randomBytes } from "node:crypto";
import { Agent } from "undici";
import { secretKey, signatureHeader } from "../../lib/signing/standard-webhooks";
import { USER_AGENT } from "../../lib/net/sender";
import { DEFAULT_TIMEOUT_MS } from "../../lib/ledger/retry-policy";

/** A job's data, as each queue stores it: where it goes, its message id and the event. */
export type WebhookJob = { url: string; id: string; event: Record<string, unknown> };

/** What the bench hands a peer process (env PEER_CONFIG, JSON). */
export type PeerConfig = {
  databaseUrl: string;
  jobs: number;
  /** The endpoints' URLs; job g goes to endpoints[g mod length], as the drain's event g goes to subs[g mod length]. */
  endpoints: string[];
  /** Requests on the wire at most, over all endpoints: the hookledger drain's 20 subscriptions × max_concurrency 10. */
  concurrency: number;
  /** Keep-alive connections to the receiver's origin: hookledger's per-origin default. */
  connections: number;
  /** Peer-specific settings (batch size, pool size…), echoed in the result. */
  settings: Record<string, number | boolean | string>;
};

/** Event g's envelope: the drain's `{"id","type","timestamp","data":{…,"comment":"xxx…"}}`, about 1 KB serialized. */
export function webhookJob(g: number, endpoints: string[]): WebhookJob {
  const url = endpoints[g % endpoints.length];
  return {
    url,
    id: `msg_${g}_${g % endpoints.length}`,
    event: {
      id: `evt_${g}`,
      type: "assignment.graded",
      timestamp: new Date().toISOString(),
      data: { studentId: `stu_${g}`, assignmentId: "asg_7", score: 93, comment: "x".repeat(1024 - 150) },
    },
  };
}

/**
 * The POST of one job, as a team would write it around undici: an Agent with
 * hookledger's connection settings (lib/net/sender.ts: 50 per origin, no
 * pipelining, 30 s keep-alive), each endpoint's URL parsed and secret decoded
 * once. Counts what it did, so the harness knows when every job has had its 2xx.
 */
function webhookSender(cfg: PeerConfig) {
  const agent = new Agent({ connections: cfg.connections, pipelining: 1, keepAliveTimeout: 30_000 });
  const targets = new Map(
    cfg.endpoints.map((url) => {
      const u = new URL(url);
      return [url, { origin: u.origin, path: u.pathname + u.search, key: secretKey(`whsec_${randomBytes(24).toString("base64")}`) }];
    }),
  );
  const stats = { firstPostAt: 0, lastOkAt: 0, ok: 0, failed: 0 };
  async function send(job: WebhookJob): Promise<void> {
    const t = targets.get(job.url);
    if (!t) throw new Error(`unknown endpoint ${job.url}`);
    const body = Buffer.from(JSON.stringify(job.event));
    const timestamp = Math.floor(Date.now() / 1000);
    if (stats.firstPostAt === 0) stats.firstPostAt = Date.now();
    const res = await agent.request({
      origin: t.origin,
      path: t.path,
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "webhook-id": job.id,
        "idempotency-key": job.id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": signatureHeader([t.key], job.id, timestamp, body),
      },
      body,
      headersTimeout: DEFAULT_TIMEOUT_MS,
      bodyTimeout: DEFAULT_TIMEOUT_MS,
    });
    await res.body.dump();
    if (res.statusCode < 200 || res.statusCode > 299) {
      stats.failed++;
      throw new Error(`${job.url} answered ${res.statusCode}`);
    }
    stats.ok++;
    stats.lastOkAt = Date.now();
  }
  return { send, stats, close: () => agent.close() };
}

type Sender = ReturnType<typeof webhookSender>;

/** A peer, from its process's side: `setup` installs its schema and enqueues every job; `start` works them off. */
type Peer = {
  setup: (cfg: PeerConfig) => Promise<void>;
  /** Starts the workers; `done` resolves with the time (ms since the epoch) the last job was recorded done in the queue's database. */
  start: (sender: Sender) => Promise<{ done: Promise<number>; stop: () => Promise<void> }>;
  /** What the queue's tables say once it is done: completed, failed, left… */
  check: () => Promise<Record<string, number>>;
};

/**
 * The peer process (bench/peers/run.ts starts it): setup, then `ENQUEUED` on
 * stdout; on SIGUSR2 the workers start, so the bench can take its CPU snapshot
 * first, as the drain opens its backlog only when the worker is up. `RESULT
 * {json}` when every job is recorded done, then a graceful stop.
 */
export async function runPeerProcess(peer: Peer) {
  const cfg = JSON.parse(process.env.PEER_CONFIG ?? "{}") as PeerConfig;
  const go = new Promise<void>((resolve) => process.once("SIGUSR2", () => resolve()));
  const t0 = performance.now();
  await peer.setup(cfg);
  process.stdout.write(`ENQUEUED ${JSON.stringify({ seconds: Math.round(performance.now() - t0) / 1000 })}\n`);
  await go;
  const sender = webhookSender(cfg);
  const { done, stop } = await peer.start(sender);
  const doneAt = await done;
  const seconds = (doneAt - sender.stats.firstPostAt) / 1000;
  const check = await peer.check();
  process.stdout.write(`RESULT ${JSON.stringify({ ...sender.stats, doneAt, seconds, perSecond: Math.round(cfg.jobs / seconds), check })}\n`);
  await stop();
  await sender.close();
  process.exit(0);
}

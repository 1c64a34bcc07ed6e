// The chaos receivers: node:http servers on 127.0.0.1 that behave like the
// districts that break webhook systems. Every one of them de-duplicates on
// webhook-id the way a careful receiver does (that is what the stable key is
// for, docs/DESIGN.md invariants 1 and 4), and records every request it saw and every key it
// applied, so the end-of-run checks can compare the wire with the ledger.
import http from "node:http";
import { timingSafeEqual } from "node:crypto";
import type { AddressInfo } from "node:net";
import { secretKey, signOne } from "../lib/signing/standard-webhooks";
import { rng, type Rng } from "../lib/random";
import { deliveryKey } from "../lib/ledger/delivery-key";

export type Behavior = "dedup" | "drop" | "flaky503" | "reject422" | "throttle429";

/** What each behavior does besides de-duplicating (the list of districts). */
export const BEHAVIORS: Record<Behavior, string> = {
  dedup: "applies each webhook-id once, answers 200 (a duplicate is suppressed and answered 200 too)",
  drop: "applies, then drops 5% of connections without answering (committed, but the sender sees a reset)",
  flaky503: "answers 503 to 10% of requests (nothing applied)",
  reject422: "answers 422 to 2% of requests (permanent: nothing applied)",
  throttle429: "a rate limit: past its requests per second, answers 429 with Retry-After: 1 until the next second (nothing applied)",
};

export { rng, type Rng } from "../lib/random";

export type WireProblem = { key: string; problem: string };

export class ChaosReceiver {
  readonly behavior: Behavior;
  readonly subscriptionId: string;
  url = "";
  /** Complete requests seen, per webhook-id (every request, duplicates included). */
  readonly requests = new Map<string, number>();
  /** Keys applied (committed), each once: a repeat is suppressed, as the stable key allows. */
  readonly applied = new Set<string>();
  /** Requests for a key already applied: answered 200, not applied again. */
  suppressed = 0;
  /** Arrival times (ms since epoch) of every request, for the pause check. */
  readonly arrivals: number[] = [];
  /** Signature, identity or header problems (docs/DESIGN.md invariants 1 and 10). */
  readonly problems: WireProblem[] = [];
  answered = { ok: 0, dropped: 0, s503: 0, s422: 0, s429: 0 };
  /** Requests that came back sooner than the Retry-After: 1 of a 429 to the same key (informational: a reaped lease legitimately retries at once). */
  earlyAfter429 = 0;
  private last429 = new Map<string, number>();
  /** throttle429's limit, and the requests counted in the current second. */
  private readonly perSecond: number;
  private window = { second: 0, count: 0 };
  private server: http.Server | null = null;
  private readonly random: Rng;
  private readonly keys: Buffer[];
  private readonly latency: { slowShare: number; fastMs: number; slowMs: [number, number] };

  constructor(opts: {
    behavior: Behavior;
    subscriptionId: string;
    /** Plaintext whsec_ secrets the signature must verify against (any one). */
    secrets: string[];
    seed: number;
    /** Most answers take 0..fastMs; slowShare of them take slowMs: long enough to be mid-send when a lease is expired under them. */
    latency?: { slowShare: number; fastMs: number; slowMs: [number, number] };
    /** throttle429: requests per second it takes before answering 429 (a district's rate limit). */
    perSecond?: number;
  }) {
    this.behavior = opts.behavior;
    this.subscriptionId = opts.subscriptionId;
    this.keys = opts.secrets.map(secretKey);
    this.random = rng(opts.seed);
    this.latency = opts.latency ?? { slowShare: 0.05, fastMs: 15, slowMs: [200, 800] };
    this.perSecond = opts.perSecond ?? Infinity;
  }

  /**
   * throttle429's decision, as a rate limiter makes it on arrival: over the limit within this second. A limit, not a
   * share of requests refused at random: the sender holds the whole endpoint for a 429's Retry-After (docs/DESIGN.md
   * invariant 6), so a 429 to every seventh request would cap the endpoint near seven requests a second, which no
   * district's limiter does and no backlog drains at.
   */
  private overLimit(): boolean {
    if (this.behavior !== "throttle429") return false;
    const second = Math.floor(Date.now() / 1000);
    if (second !== this.window.second) this.window = { second, count: 0 };
    return ++this.window.count > this.perSecond;
  }

  /** Every request seen, duplicates included. */
  requestCount = 0;

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => this.handle(req, res, Buffer.concat(chunks)));
      req.on("error", () => {});
    });
    this.server.keepAliveTimeout = 60_000;
    this.server.on("clientError", (_err, socket) => socket.destroy());
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks/${this.behavior}`;
    return this;
  }

  async close() {
    const s = this.server;
    this.server = null;
    if (!s) return;
    await new Promise<void>((resolve) => {
      s.closeAllConnections();
      s.close(() => resolve());
    });
  }

  private check(req: http.IncomingMessage, body: Buffer): string {
    const key = String(req.headers["webhook-id"] ?? "");
    if (!/^[0-9a-f]{64}$/.test(key)) {
      this.problems.push({ key, problem: `webhook-id ${JSON.stringify(key)} is not a delivery key` });
      return key;
    }
    if (req.headers["idempotency-key"] !== key)
      this.problems.push({ key, problem: `Idempotency-Key ${JSON.stringify(req.headers["idempotency-key"])} differs from webhook-id` });
    // Identity (docs/DESIGN.md invariant 1): the key is sha256(subscription id ":" event id) of the event in the body.
    let eventId = "";
    try {
      eventId = String((JSON.parse(body.toString("utf8")) as { id?: unknown }).id ?? "");
    } catch {
      this.problems.push({ key, problem: "the body is not JSON" });
    }
    const expected = deliveryKey(this.subscriptionId, eventId);
    if (eventId && expected !== key) this.problems.push({ key, problem: `webhook-id is not sha256("${this.subscriptionId}:${eventId}")` });
    // Signature over the exact bytes received (docs/DESIGN.md invariant 10).
    const ts = Number(req.headers["webhook-timestamp"]);
    const sigs = String(req.headers["webhook-signature"] ?? "")
      .split(" ")
      .filter(Boolean);
    if (!Number.isInteger(ts) || Math.abs(Date.now() / 1000 - ts) > 300)
      this.problems.push({ key, problem: `webhook-timestamp ${JSON.stringify(req.headers["webhook-timestamp"])} is not now` });
    else {
      const good = this.keys.some((k) => {
        const want = Buffer.from(signOne(k, key, ts, body));
        return sigs.some((s) => s.length === want.length && timingSafeEqual(Buffer.from(s), want));
      });
      if (!good) this.problems.push({ key, problem: "no webhook-signature verifies against the subscription's secret" });
    }
    return key;
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) {
    const key = this.check(req, body);
    this.arrivals.push(Date.now());
    this.requestCount++;
    const t429 = this.last429.get(key);
    if (t429 !== undefined && Date.now() - t429 < 950) this.earlyAfter429++;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
    const r = this.random;
    const l = this.latency;
    const delay = r() < l.slowShare ? l.slowMs[0] + r() * (l.slowMs[1] - l.slowMs[0]) : r() * l.fastMs;
    const roll = r();
    const throttled = this.overLimit();
    setTimeout(() => {
      if (res.destroyed) return;
      // Refusals happen before anything is applied.
      if (this.behavior === "flaky503" && roll < 0.1) return this.answer(res, 503, "s503", "try again later");
      if (this.behavior === "reject422" && roll < 0.02) return this.answer(res, 422, "s422", '{"error":"grade rejected by importer"}');
      if (throttled) {
        this.last429.set(key, Date.now());
        return this.answer(res, 429, "s429", "slow down", { "retry-after": "1" });
      }
      // Apply (once per key), then answer, or for `drop` sometimes commit and hang up.
      if (this.applied.has(key)) this.suppressed++;
      else this.applied.add(key);
      if (this.behavior === "drop" && roll < 0.05) {
        this.answered.dropped++;
        req.socket.destroy();
        return;
      }
      this.answer(res, 200, "ok", '{"ok":true}');
    }, delay);
  }

  private answer(res: http.ServerResponse, status: number, counter: keyof ChaosReceiver["answered"], text: string, headers: Record<string, string> = {}) {
    this.answered[counter]++;
    res.writeHead(status, { "content-type": "application/json", ...headers }).end(text);
  }
}

/** What a receiver recorded, as the end-of-run checks read it. */
export type ReceiverRecord = {
  behavior: Behavior;
  subscriptionId: string;
  requests: Map<string, number>;
  applied: Set<string>;
  suppressed: number;
  arrivals: number[];
  problems: WireProblem[];
  answered: ChaosReceiver["answered"];
  requestCount: number;
  earlyAfter429: number;
};

export type ReceiverSpec = { behavior: Behavior; subscriptionId: string; secrets: string[]; seed: number; perSecond?: number };

type Wire =
  | { type: "started"; urls: string[] }
  | { type: "counts"; id: number; counts: number[] }
  | {
      type: "snapshot";
      id: number;
      records: (Omit<ReceiverRecord, "requests" | "applied"> & { requests: [string, number][]; applied: string[] })[];
    };

/**
 * The receivers run in a process of their own (chaos/receiver-process.ts): the
 * driver's publishing (Prisma) must not starve them of CPU, or every answer
 * would be late and every attempt a timeout. The host talks to it over IPC.
 */
export class ReceiverHost {
  private child: import("node:child_process").ChildProcess | null = null;
  private seq = 0;
  private waiting = new Map<number, (m: Wire) => void>();
  urls: string[] = [];

  async start(specs: ReceiverSpec[]): Promise<string[]> {
    const { fork } = await import("node:child_process");
    const path = await import("node:path");
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const k of Object.keys(env)) if (k.startsWith("VITEST") || k === "NODE_OPTIONS") delete env[k];
    const child = fork(path.resolve("bin/run-ts.mjs"), ["chaos/receiver-process.ts"], { execArgv: [], env, stdio: ["ignore", "inherit", "inherit", "ipc"] });
    this.child = child;
    const started = new Promise<string[]>((resolve, reject) => {
      child.once("exit", (code, sig) => reject(new Error(`the receiver process exited (${code ?? sig}) before it started`)));
      child.on("message", (m: Wire) => {
        if (m.type === "started") resolve(m.urls);
        else this.waiting.get(m.id)?.(m);
      });
    });
    child.send({ type: "start", specs });
    this.urls = await started;
    return this.urls;
  }

  private ask<T extends Wire>(type: "counts" | "snapshot"): Promise<T> {
    const id = ++this.seq;
    return new Promise<T>((resolve) => {
      this.waiting.set(id, (m) => {
        this.waiting.delete(id);
        resolve(m as T);
      });
      this.child!.send({ type, id });
    });
  }

  /** Requests seen so far by each receiver. */
  async counts(): Promise<number[]> {
    return (await this.ask<Extract<Wire, { type: "counts" }>>("counts")).counts;
  }

  async snapshot(): Promise<ReceiverRecord[]> {
    const m = await this.ask<Extract<Wire, { type: "snapshot" }>>("snapshot");
    return m.records.map((r) => ({ ...r, requests: new Map(r.requests), applied: new Set(r.applied) }));
  }

  async stop() {
    const c = this.child;
    this.child = null;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const gone = new Promise((r) => c.once("exit", r));
    c.kill("SIGKILL");
    await gone;
  }
}

// Simulated school-district webhook receivers, one HTTP server each, each with
// the failure a real district endpoint has: a slow legacy PHP handler, a rate
// limit, a strict importer, a load balancer that drops the connection after the
// importer committed, a decommissioned endpoint, and a careful receiver that
// verifies signatures and de-duplicates on `webhook-id`.
//
// Every district counts what it received and what it applied (a gradebook row
// written), keyed by `webhook-id`, so its status page can show whether anything
// was ever applied twice. A "fix" switch per district turns its failure off, so
// an operator can redrive the DLQ and watch it drain.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createHmac, timingSafeEqual } from "node:crypto";
import type { DistrictSlug } from "./catalog";

/**
 * The demo's pages (the control page, each district's status page) listen on
 * 127.0.0.1, so only a page in this machine's browser reaches them; but a page
 * on a rebound name (a DNS answer moved to 127.0.0.1) would reach them as its
 * own origin and read them. So they answer to loopback names only.
 */
export function loopbackHost(host: string | undefined): boolean {
  const name = /^(\[[^\]]*\]|[^:]*)(?::\d*)?$/.exec((host ?? "").trim().toLowerCase())?.[1];
  return name === "localhost" || name === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name ?? "");
}

export type DistrictKnobs = {
  /** Healthy SIS: response latency range, ms. */
  latencyMs: [number, number];
  /** Legacy handler: share of requests answered 500 (before anything is written). */
  error500Rate: number;
  /** Legacy handler: share of requests that commit, then hang longer than the sender's timeout. */
  hangRate: number;
  hangMs: number;
  /** Rate-limited district: requests allowed per fixed window. */
  ratePerWindow: number;
  windowSeconds: number;
  /** Load-balanced district: share of requests whose connection is dropped after the commit. */
  dropRate: number;
  /** De-duplicating district: share of requests answered 503 after the commit. */
  failAfterCommitRate: number;
};

const DEFAULT_KNOBS: DistrictKnobs = {
  latencyMs: [300, 1500],
  error500Rate: 0.08,
  hangRate: 0.06,
  hangMs: 10_000,
  // 10 per 10 s: above Riverside's share of the default traffic (16 % of 4 events/s, 6.4 per window), so the 429s
  // come from bursts and the retries that honour Retry-After get through. At 6, below its share, the backlog could
  // only grow, and every delivery past its last retry was dead-lettered as exhausted.
  ratePerWindow: 10,
  windowSeconds: 10,
  dropRate: 0.3,
  failAfterCommitRate: 0.15,
};

export type DistrictInfo = {
  slug: DistrictSlug;
  name: string;
  /** The tenant's name, as the dashboard's headers and the admin page show the district ("Lincoln USD"). */
  tenantName: string;
  /** The subscription that points at this district. */
  subscriptionId: string;
  eventTypes: string[];
  behaviour: string;
  brokenBehaviour: string;
  fixedBehaviour: string;
  /** Button labels on the control page. */
  fixLabel: string;
  breakLabel: string;
  /** Whether the district starts in its fixed state (the healthy SIS does). */
  startsFixed: boolean;
  /** Whether the importer skips a webhook-id it already applied. */
  dedupe: boolean;
};

const ALL_TYPES = ["assignment.graded", "attendance.recorded", "roster.updated"];

export const DISTRICTS: DistrictInfo[] = [
  {
    slug: "lincoln",
    name: "Lincoln Unified School District",
    tenantName: "Lincoln USD",
    subscriptionId: "sub_demo_lincoln",
    eventTypes: ALL_TYPES,
    behaviour: "Healthy SIS",
    brokenBehaviour: "Outage: every request answers 503 Service Unavailable.",
    fixedBehaviour: "A current SIS: answers 200 or 204 within a few milliseconds; de-duplicates on webhook-id.",
    fixLabel: "End the outage",
    breakLabel: "Start an outage",
    startsFixed: true,
    dedupe: true,
  },
  {
    slug: "jefferson",
    name: "Jefferson County Schools",
    tenantName: "Jefferson County Schools",
    subscriptionId: "sub_demo_jefferson",
    eventTypes: ALL_TYPES,
    behaviour: "Legacy PHP handler",
    brokenBehaviour:
      "A decade-old PHP script: 0.3–1.5 s per request, an occasional 500, sometimes writes the row and then hangs past the sender's timeout, and always a 500 for a student whose surname has an apostrophe (unescaped SQL). It does not look at webhook-id, so a retry after a hang writes a second row.",
    fixedBehaviour: "The handler was rewritten: 200 in ~50 ms, quotes escaped, rows keyed on webhook-id.",
    fixLabel: "Deploy the rewritten handler",
    breakLabel: "Roll back to the PHP handler",
    startsFixed: false,
    dedupe: false,
  },
  {
    slug: "riverside",
    name: "Riverside Independent School District",
    tenantName: "Riverside ISD",
    subscriptionId: "sub_demo_riverside",
    eventTypes: ALL_TYPES,
    behaviour: "Rate-limited",
    brokenBehaviour: "An API gateway allowing 10 requests per 10-second window; beyond that 429 Too Many Requests with Retry-After (seconds until the window resets).",
    fixedBehaviour: "The district raised its quota: no rate limit.",
    fixLabel: "Lift the rate limit",
    breakLabel: "Reinstate the rate limit",
    startsFixed: false,
    dedupe: true,
  },
  {
    slug: "maplegrove",
    name: "Maple Grove Public Schools",
    tenantName: "Maple Grove Public Schools",
    subscriptionId: "sub_demo_maplegrove",
    eventTypes: ["assignment.graded"],
    behaviour: "Strict importer",
    brokenBehaviour:
      'A strict gradebook importer: 422 "missing field term_id" for a grade recorded outside a grading term (no term_id). Retrying the same JSON cannot help, so hookledger dead-letters it at once.',
    fixedBehaviour: "The importer now defaults a missing term_id to the current term and accepts the grade.",
    fixLabel: "Accept a missing term_id",
    breakLabel: "Require term_id again",
    startsFixed: false,
    dedupe: true,
  },
  {
    slug: "cedarfalls",
    name: "Cedar Falls Community Schools",
    tenantName: "Cedar Falls Community Schools",
    subscriptionId: "sub_demo_cedarfalls",
    eventTypes: ALL_TYPES,
    behaviour: "Drops the connection after commit",
    brokenBehaviour:
      "The importer commits the row, then the district's load balancer drops the connection before the answer gets out. hookledger cannot know it landed, so it retries with the same webhook-id, which the importer recognises.",
    fixedBehaviour: "The load balancer's idle timeout was fixed: every answer arrives.",
    fixLabel: "Fix the load balancer",
    breakLabel: "Break the load balancer",
    startsFixed: false,
    dedupe: true,
  },
  {
    slug: "westfield",
    name: "Westfield Academy",
    tenantName: "Westfield Academy",
    subscriptionId: "sub_demo_westfield",
    eventTypes: ALL_TYPES,
    behaviour: "Decommissioned (410 Gone)",
    brokenBehaviour: "The endpoint was decommissioned: 410 Gone. hookledger dead-letters the delivery and disables the subscription; later events are held, not dropped.",
    fixedBehaviour: "The endpoint is back and answers 200 (reactivate the subscription in the dashboard, then redrive).",
    fixLabel: "Bring the endpoint back",
    breakLabel: "Decommission it again",
    startsFixed: false,
    dedupe: true,
  },
  {
    slug: "oakridge",
    name: "Oak Ridge School District",
    tenantName: "Oak Ridge School District",
    subscriptionId: "sub_demo_oakridge",
    eventTypes: ALL_TYPES,
    behaviour: "Verifies signatures, de-duplicates on webhook-id",
    brokenBehaviour:
      "A careful receiver: verifies the Standard Webhooks signature, applies each webhook-id once, and reports what it applied. Its notification step sometimes fails after the commit (503), so hookledger retries and the retry is recognised as a duplicate.",
    fixedBehaviour: "The notification step no longer fails: one request per delivery.",
    fixLabel: "Fix the notification step",
    breakLabel: "Break the notification step",
    startsFixed: false,
    dedupe: true,
  },
];

/** One delivery as the district saw it: `n` times applied, `seen` requests carrying its webhook-id. */
export type AppliedRow = { n: number; seen: number; eventId: string; type: string; studentId?: string; at: string };

export type DistrictStats = {
  received: number;
  byStatus: Record<string, number>;
  /** Gradebook rows written (one per application, duplicates included). */
  rowsWritten: number;
  /** Deliveries (webhook-ids) applied at least once. */
  uniqueApplied: number;
  /** Redeliveries recognised by webhook-id and not applied again. */
  duplicatesIgnored: number;
  /** Redeliveries applied a second time (only a receiver that ignores webhook-id does this). */
  duplicatesApplied: number;
  /** Connections dropped after the commit. */
  droppedAfterCommit: number;
  /** Requests that hung past the sender's timeout. */
  hung: number;
  signaturesVerified: number;
  signatureFailures: number;
};

export type RecentRequest = {
  at: string;
  webhookId: string | null;
  eventId: string | null;
  type: string | null;
  studentId: string | null;
  answer: string;
  note?: string;
};

export type DistrictStatus = DistrictInfo & {
  url: string;
  statusUrl: string;
  fixed: boolean;
  stats: DistrictStats;
  /** The highest number of times any one webhook-id was applied: 1 means never twice. */
  maxAppliedPerKey: number;
  recent: RecentRequest[];
};

export type DistrictSnapshot = { fixed: boolean; stats: DistrictStats; applied: [string, AppliedRow][] };

type Verifier = (body: Buffer, headers: Record<string, string>) => Promise<"ok" | "bad" | "skipped">;

const emptyStats = (): DistrictStats => ({
  received: 0,
  byStatus: {},
  rowsWritten: 0,
  uniqueApplied: 0,
  duplicatesIgnored: 0,
  duplicatesApplied: 0,
  droppedAfterCommit: 0,
  hung: 0,
  signaturesVerified: 0,
  signatureFailures: 0,
});

const MAX_BODY = 1024 * 1024;
const RECENT = 40;

export class District {
  readonly info: DistrictInfo;
  knobs: DistrictKnobs;
  fixed: boolean;
  stats: DistrictStats = emptyStats();
  readonly applied = new Map<string, AppliedRow>();
  readonly recent: RecentRequest[] = [];
  /** Set whenever something changed, so the state file is rewritten. */
  dirty = false;
  private server?: http.Server;
  private port = 0;
  private timers = new Set<NodeJS.Timeout>();
  private windowStart = 0;
  private windowCount = 0;
  private verifier?: Verifier;

  constructor(info: DistrictInfo, knobs: Partial<DistrictKnobs> = {}, verifier?: Verifier) {
    this.info = info;
    this.knobs = { ...DEFAULT_KNOBS, ...knobs };
    this.fixed = info.startsFixed;
    this.verifier = verifier;
  }

  get url() {
    return `http://127.0.0.1:${this.port}/webhook`;
  }
  get statusUrl() {
    return `http://127.0.0.1:${this.port}/`;
  }

  restore(s: Partial<DistrictSnapshot> | undefined) {
    if (!s) return;
    if (typeof s.fixed === "boolean") this.fixed = s.fixed;
    if (s.stats) this.stats = { ...emptyStats(), ...s.stats };
    for (const [k, row] of s.applied ?? []) this.applied.set(k, row);
  }

  snapshot(): DistrictSnapshot {
    return { fixed: this.fixed, stats: this.stats, applied: [...this.applied] };
  }

  setFixed(fixed: boolean) {
    if (this.fixed !== fixed) this.dirty = true;
    this.fixed = fixed;
  }

  status(): DistrictStatus {
    let max = 0;
    for (const r of this.applied.values()) max = Math.max(max, r.n);
    return {
      ...this.info,
      url: this.url,
      statusUrl: this.statusUrl,
      fixed: this.fixed,
      stats: this.stats,
      maxAppliedPerKey: max,
      recent: [...this.recent].reverse(),
    };
  }

  /** Listens on 127.0.0.1:`port`, or an ephemeral port if that one is taken (or 0). */
  async listen(port: number): Promise<number> {
    const server = http.createServer((req, res) => void this.handle(req, res));
    server.keepAliveTimeout = 5_000;
    const tryListen = (p: number) =>
      new Promise<number>((resolve, reject) => {
        const onError = (err: Error) => reject(err);
        server.once("error", onError);
        server.listen(p, "127.0.0.1", () => {
          server.off("error", onError);
          resolve((server.address() as AddressInfo).port);
        });
      });
    try {
      this.port = await tryListen(port);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE" || port === 0) throw err;
      this.port = await tryListen(0);
    }
    this.server = server;
    return this.port;
  }

  async close() {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    const s = this.server;
    if (!s) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      s.close(() => resolve());
      s.closeAllConnections();
    });
  }

  private sleep(ms: number, req: http.IncomingMessage): Promise<boolean> {
    // Resolves false if the client went away first (the sender's timeout fired).
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.timers.delete(t);
        req.socket.off("close", onClose);
        resolve(true);
      }, ms);
      const onClose = () => {
        clearTimeout(t);
        this.timers.delete(t);
        resolve(false);
      };
      this.timers.add(t);
      req.socket.once("close", onClose);
    });
  }

  private record(r: Omit<RecentRequest, "at">, status: string) {
    this.stats.byStatus[status] = (this.stats.byStatus[status] ?? 0) + 1;
    this.recent.push({ at: new Date().toISOString(), ...r });
    if (this.recent.length > RECENT) this.recent.shift();
    this.dirty = true;
  }

  /** Writes the gradebook row; a de-duplicating importer skips a webhook-id it already applied. */
  private apply(key: string, ev: ParsedEvent, dedupe = this.info.dedupe): "applied" | "duplicate" {
    const prior = this.applied.get(key);
    if (prior) prior.seen = (prior.seen ?? prior.n) + 1;
    if (prior && dedupe) {
      this.stats.duplicatesIgnored++;
      return "duplicate";
    }
    this.stats.rowsWritten++;
    if (prior) {
      prior.n++;
      this.stats.duplicatesApplied++;
    } else {
      this.applied.set(key, { n: 1, seen: 1, eventId: ev.id, type: ev.type, studentId: ev.studentId, at: new Date().toISOString() });
      this.stats.uniqueApplied++;
    }
    this.dirty = true;
    return "applied";
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse) {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method === "GET" && !loopbackHost(req.headers.host))
      return sendJson(res, 421, {
        error: { code: "misdirected_request", message: "A demo district's pages answer on this machine only: open them at http://127.0.0.1:<port>." },
      });
    if (req.method === "GET" && (path === "/status" || path === "/status.json")) return sendJson(res, 200, this.status());
    if (req.method === "GET" && path === "/") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      return res.end(renderDistrictPage(this.status()));
    }
    if (req.method !== "POST" || path !== "/webhook") return sendJson(res, 404, { error: "not_found" });

    let body: Buffer;
    try {
      body = await readBody(req);
    } catch {
      return sendJson(res, 413, { error: "payload_too_large" });
    }
    this.stats.received++;
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : (v ?? "")]));
    const webhookId = headers["webhook-id"] || null;
    const ev = parseEvent(body);
    const base = { webhookId, eventId: ev?.id ?? null, type: ev?.type ?? null, studentId: ev?.studentId ?? null };
    const answer = (status: number, payload: unknown, note?: string, extra: Record<string, string> = {}) => {
      this.record({ ...base, answer: String(status), note }, String(status));
      if (status === 204) {
        res.writeHead(204, extra);
        return res.end();
      }
      sendJson(res, status, payload, extra);
    };
    if (!ev) return answer(400, { error: "bad_request", message: "body is not a webhook event" });
    if (!webhookId) return answer(400, { error: "bad_request", message: "missing webhook-id header" });

    if (this.verifier) {
      const v = await this.verifier(body, headers);
      if (v === "bad") {
        this.stats.signatureFailures++;
        return answer(401, { error: "invalid_signature", message: "webhook-signature does not match any of our secrets" }, "signature rejected");
      }
      if (v === "ok") this.stats.signaturesVerified++;
    }

    const k = this.knobs;
    switch (this.info.slug) {
      case "lincoln": {
        if (!this.fixed) return answer(503, { error: "unavailable", message: "SIS maintenance in progress" }, "outage", { "retry-after": "20" });
        await this.sleep(rand(5, 40), req);
        const r = this.apply(webhookId, ev);
        if (r === "duplicate") return answer(200, { status: "duplicate", webhookId }, "duplicate ignored");
        return Math.random() < 0.5 ? answer(204, null) : answer(200, { status: "ok", gradebookEntry: `gb_${this.stats.rowsWritten}` });
      }
      case "jefferson": {
        if (this.fixed) {
          await this.sleep(rand(30, 80), req);
          const r = this.apply(webhookId, ev, true);
          return answer(200, { status: r === "duplicate" ? "duplicate" : "ok" }, r === "duplicate" ? "duplicate ignored" : undefined);
        }
        const [lo, hi] = k.latencyMs;
        if (!(await this.sleep(rand(lo, hi), req))) return this.record({ ...base, answer: "client gone" }, "client gone");
        if (ev.studentName?.includes("'")) {
          const near = ev.studentName.split("'")[1];
          return answer(
            500,
            phpError(
              `Uncaught mysqli_sql_exception: You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '${near}', ${ev.score ?? "NULL"})' at line 1 in /var/www/html/grades/import.php:88`,
            ),
            "SQL error on an apostrophe",
          );
        }
        if (Math.random() < k.error500Rate)
          return answer(
            500,
            phpError("Allowed memory size of 134217728 bytes exhausted (tried to allocate 20480 bytes) in /var/www/html/grades/import.php on line 212"),
            "PHP fatal error",
          );
        // Legacy: every request writes a row, webhook-id or not.
        this.applyNoDedupe(webhookId, ev);
        if (Math.random() < k.hangRate) {
          this.stats.hung++;
          this.dirty = true;
          // Committed, then stuck sending the parent e-mail past the sender's timeout.
          if (!(await this.sleep(k.hangMs, req))) return this.record({ ...base, answer: "timed out", note: "row written, answer never sent" }, "timed out");
        }
        return answer(200, "OK", undefined, { "content-type": "text/plain" });
      }
      case "riverside": {
        const retryAfter = this.fixed ? null : this.overRateLimit();
        if (retryAfter !== null)
          return answer(
            429,
            { error: "rate_limited", message: `Too many requests: ${k.ratePerWindow} per ${k.windowSeconds} s. Retry after ${retryAfter} s.` },
            `Retry-After: ${retryAfter}`,
            { "retry-after": String(retryAfter) },
          );
        await this.sleep(rand(10, 60), req);
        const r = this.apply(webhookId, ev);
        return answer(200, { status: r === "duplicate" ? "duplicate" : "accepted" }, r === "duplicate" ? "duplicate ignored" : undefined);
      }
      case "maplegrove": {
        await this.sleep(rand(10, 50), req);
        if (ev.type === "assignment.graded" && !ev.hasTermId && !this.fixed)
          return answer(422, { error: "validation_failed", message: "missing field term_id", field: "data.term_id" }, "missing term_id");
        const r = this.apply(webhookId, ev);
        return answer(
          200,
          { status: r === "duplicate" ? "duplicate" : "imported", term_id: ev.hasTermId ? undefined : "fall-2026 (defaulted)" },
          r === "duplicate" ? "duplicate ignored" : undefined,
        );
      }
      case "cedarfalls": {
        await this.sleep(rand(20, 120), req);
        const r = this.apply(webhookId, ev);
        if (!this.fixed && r === "applied" && Math.random() < k.dropRate) {
          // The importer committed; the load balancer drops the connection before the answer.
          this.stats.droppedAfterCommit++;
          this.record({ ...base, answer: "connection dropped", note: "row committed, then the connection was dropped" }, "dropped");
          req.socket.destroy();
          return;
        }
        return answer(200, { status: r === "duplicate" ? "duplicate" : "imported" }, r === "duplicate" ? "already applied: recognised by webhook-id" : undefined);
      }
      case "westfield": {
        if (!this.fixed)
          return answer(
            410,
            { error: "gone", message: "This endpoint was decommissioned on 2026-06-30. Westfield Academy now receives grades through the county SIS." },
            "decommissioned",
          );
        const r = this.apply(webhookId, ev);
        return answer(200, { status: r === "duplicate" ? "duplicate" : "ok" });
      }
      case "oakridge": {
        await this.sleep(rand(10, 60), req);
        const r = this.apply(webhookId, ev);
        if (r === "duplicate") return answer(200, { status: "duplicate", webhookId, appliedAt: this.applied.get(webhookId)?.at }, "already applied: not applied again");
        if (!this.fixed && Math.random() < k.failAfterCommitRate)
          return answer(503, { error: "unavailable", message: "grade saved, but the parent-notification service did not answer" }, "committed, then 503");
        return answer(200, { status: "applied", webhookId });
      }
    }
  }

  /** Riverside's fixed window: counts this request, and past the limit returns the seconds to the window's end (null within it). */
  private overRateLimit(): number | null {
    const k = this.knobs;
    const now = Date.now();
    const win = k.windowSeconds * 1000;
    const start = now - (now % win);
    if (start !== this.windowStart) {
      this.windowStart = start;
      this.windowCount = 0;
    }
    return ++this.windowCount > k.ratePerWindow ? Math.max(1, Math.ceil((start + win - now) / 1000)) : null;
  }

  /** A legacy importer writes a row for every request: a retry becomes a duplicate row. */
  private applyNoDedupe(key: string, ev: ParsedEvent) {
    this.apply(key, ev, false);
  }
}

type ParsedEvent = { id: string; type: string; studentId?: string; studentName?: string; score?: number; hasTermId: boolean };

function parseEvent(body: Buffer): ParsedEvent | null {
  try {
    const j = JSON.parse(body.toString("utf8")) as { id?: unknown; type?: unknown; data?: Record<string, unknown> };
    if (typeof j.id !== "string" || typeof j.type !== "string") return null;
    const d = j.data ?? {};
    return {
      id: j.id,
      type: j.type,
      studentId: typeof d.studentId === "string" ? d.studentId : undefined,
      studentName: typeof d.studentName === "string" ? d.studentName : undefined,
      score: typeof d.score === "number" ? d.score : undefined,
      hasTermId: typeof d.term_id === "string" && d.term_id.length > 0,
    };
  } catch {
    return null;
  }
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let n = 0;
    req.on("data", (c: Buffer) => {
      n += c.length;
      if (n > MAX_BODY) {
        reject(new Error("too large"));
        req.destroy();
      } else chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function sendJson(res: http.ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}) {
  if (res.headersSent || res.destroyed) return;
  const text = typeof payload === "string" ? payload : JSON.stringify(payload);
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(text);
}

function phpError(msg: string) {
  return `<br />\n<b>Fatal error</b>:  ${msg}<br />\n`;
}

const rand = (lo: number, hi: number) => lo + Math.random() * (hi - lo);

// --- Signature verification (Standard Webhooks) -----------------------------

type SwModule = { Webhook: new (secret: string) => { verify(payload: Buffer | string, headers: Record<string, string>): unknown } };

let swModule: Promise<SwModule | null> | undefined;
/** The `standardwebhooks` package if it is installed (a devDependency), else null. */
function loadStandardWebhooks(): Promise<SwModule | null> {
  swModule ??= import("standardwebhooks")
    .then((m) => ((m as unknown as SwModule).Webhook ? (m as unknown as SwModule) : ((m as { default?: SwModule }).default ?? null)))
    .catch(() => null);
  return swModule;
}

/** Our own check, used when `standardwebhooks` is not installed: v1 HMAC-SHA256 over id.timestamp.body. */
function verifyByHand(secret: string, body: Buffer, headers: Record<string, string>): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const id = headers["webhook-id"];
  const ts = headers["webhook-timestamp"];
  if (!id || !ts || Math.abs(Date.now() / 1000 - Number(ts)) > 300) return false;
  const expected = createHmac("sha256", key).update(`${id}.${ts}.`).update(body).digest();
  return (headers["webhook-signature"] ?? "").split(" ").some((part) => {
    const [v, sig] = part.split(",");
    if (v !== "v1" || !sig) return false;
    const got = Buffer.from(sig, "base64");
    return got.length === expected.length && timingSafeEqual(got, expected);
  });
}

/**
 * A verifier over the subscription's current secrets. On a mismatch it reloads
 * the secrets once (someone may have rotated them in the dashboard) before
 * rejecting. `loadSecrets` returning [] means "cannot verify": requests pass.
 */
export function secretVerifier(loadSecrets: () => Promise<string[]>): { verify: Verifier; library: () => Promise<string> } {
  let secrets: string[] | undefined;
  let lastReload = 0;
  const check = async (body: Buffer, headers: Record<string, string>) => {
    const sw = await loadStandardWebhooks();
    return secrets!.some((s) => {
      if (!sw) return verifyByHand(s, body, headers);
      try {
        new sw.Webhook(s).verify(body, headers);
        return true;
      } catch {
        return false;
      }
    });
  };
  const verify: Verifier = async (body, headers) => {
    if (!secrets) {
      secrets = await loadSecrets().catch(() => []);
      lastReload = Date.now();
    }
    if (secrets.length === 0) return "skipped";
    if (await check(body, headers)) return "ok";
    if (Date.now() - lastReload > 2_000) {
      secrets = await loadSecrets().catch(() => secrets!);
      lastReload = Date.now();
      if (await check(body, headers)) return "ok";
    }
    return "bad";
  };
  return { verify, library: async () => ((await loadStandardWebhooks()) ? "standardwebhooks" : "node:crypto") };
}

// --- The district's own status page -------------------------------------------

export function esc(s: unknown): string {
  return String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

export function renderDistrictPage(s: DistrictStatus): string {
  const st = s.stats;
  const byStatus = Object.entries(st.byStatus)
    .sort()
    .map(([k, v]) => `<span class="pill">${esc(k)}: ${v}</span>`)
    .join(" ");
  const rows = s.recent
    .map(
      (r) =>
        `<tr><td>${esc(r.at.slice(11, 19))}</td><td><code>${esc(r.webhookId?.slice(0, 12) ?? "")}…</code></td><td>${esc(r.eventId)}</td><td>${esc(r.type)}</td><td>${esc(r.studentId)}</td><td><b>${esc(r.answer)}</b></td><td>${esc(r.note ?? "")}</td></tr>`,
    )
    .join("");
  const never = s.maxAppliedPerKey <= 1;
  return `<!doctype html><html><head><meta charset="utf-8"><title>${esc(s.name)}: simulated district</title>
<meta http-equiv="refresh" content="3"><style>${PAGE_CSS}</style></head><body>
<h1>${esc(s.name)}</h1>
<p class="muted">Simulated district endpoint · <code>POST ${esc(s.url)}</code> · subscription <code>${esc(s.subscriptionId)}</code> · <a href="status">JSON</a></p>
<p><b>${esc(s.behaviour)}</b> · currently <b>${s.fixed ? "fixed" : "broken"}</b>: ${esc(s.fixed ? s.fixedBehaviour : s.brokenBehaviour)}</p>
<div class="cards">
<div class="card"><div class="n">${st.received}</div>requests received</div>
<div class="card"><div class="n">${st.uniqueApplied}</div>deliveries applied (distinct webhook-id)</div>
<div class="card"><div class="n">${st.rowsWritten}</div>gradebook rows written</div>
<div class="card"><div class="n">${st.duplicatesIgnored}</div>redeliveries recognised by webhook-id, not applied again</div>
<div class="card ${never ? "ok" : "bad"}"><div class="n">${st.duplicatesApplied}</div>${never ? "applied twice: never" : "duplicate rows (this importer ignores webhook-id)"}</div>
</div>
<p>Answers: ${byStatus || "none yet"}${st.droppedAfterCommit ? ` · connections dropped after commit: ${st.droppedAfterCommit}` : ""}${st.hung ? ` · hung past the timeout after commit: ${st.hung}` : ""}${st.signaturesVerified || st.signatureFailures ? ` · signatures verified: ${st.signaturesVerified}, rejected: ${st.signatureFailures}` : ""}</p>
<h2>Recent requests</h2>
<table><thead><tr><th>time (UTC)</th><th>webhook-id</th><th>event</th><th>type</th><th>student</th><th>answer</th><th></th></tr></thead><tbody>${rows || '<tr><td colspan="7" class="muted">nothing yet</td></tr>'}</tbody></table>
</body></html>`;
}

export const PAGE_CSS = `body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px;color:#1f2937;max-width:1200px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:20px 0 8px}.muted{color:#6b7280}code{font-size:12px;background:#f3f4f6;padding:1px 4px;border-radius:3px}
.cards{display:flex;gap:10px;flex-wrap:wrap;margin:12px 0}.card{border:1px solid #e5e7eb;border-radius:8px;padding:10px 14px;min-width:150px;max-width:220px}.card .n{font-size:22px;font-weight:600}
.ok{border-color:#86efac;background:#f0fdf4}.bad{border-color:#fca5a5;background:#fef2f2}.pill{display:inline-block;background:#f3f4f6;border-radius:10px;padding:0 8px;margin:1px}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #f3f4f6;vertical-align:top}th{font-weight:600;color:#374151;background:#f9fafb}
button{font:inherit;padding:4px 10px;border-radius:6px;border:1px solid #d1d5db;background:#fff;cursor:pointer}button.fix{background:#16a34a;color:#fff;border-color:#16a34a}
.state-broken{color:#b91c1c;font-weight:600}.state-fixed{color:#15803d;font-weight:600}a{color:#1d4ed8}`;

// The HTTP sender: one POST of the stored bytes, signed, with a timeout, no
// redirects, a bounded read of the answer. It reports; it never throws for a
// receiver's failure (docs/STYLE.md #6). Classification is lib/ledger/classify.ts.
import { Agent, buildConnector } from "undici";
import type { Dispatcher } from "undici";
import type { IncomingHttpHeaders } from "node:http";
import { readFileSync } from "node:fs";
import { rootCertificates } from "node:tls";
import { secretKey, signatureHeader } from "../signing/standard-webhooks";
import type { ErrorClass, SendResult } from "../ledger/classify";
import { checkIpLiteral, checkedLookup, TargetBlockedError, type LookupFunction } from "./ssrf";
import pkg from "../../package.json" with { type: "json" };
import { memoized } from "../memo";
import { DEFAULT_TIMEOUT_MS } from "../ledger/retry-policy";

export const USER_AGENT = `hookledger/${pkg.version}`;
/** attempts.response_excerpt holds at most 4 KB. */
export const EXCERPT_BYTES = 4096;
/** Past this much of an answer we stop reading and drop the connection. */
const DRAIN_LIMIT_BYTES = 256 * 1024;
/** A client-certificate dispatcher unused this long is closed (the certificate was replaced or the subscription left). */
const TLS_AGENT_IDLE_MS = 10 * 60_000;

export type SenderOptions = {
  /** Keep-alive connections per origin (one district's endpoint). */
  connectionsPerOrigin?: number;
  /** A DNS lookup for tests; every address it returns passes the SSRF guard. */
  lookup?: LookupFunction;
  /** Lifts the SSRF guard (HOOKLEDGER_ALLOW_PRIVATE_TARGETS=1). */
  allowPrivate: boolean;
  connectTimeoutMs?: number;
};

/**
 * A client certificate for mutual TLS and/or a CA to trust, opened from the
 * subscription's sealed column (lib/subscriptions/endpoint-auth.ts). `id`
 * names this material (a hash of it): connections made with one certificate
 * are never reused for another, and a changed certificate gets fresh connections.
 */
export type ClientTls = { id: string; cert?: string; key?: string; ca?: string };

export type SendRequest = {
  url: string;
  deliveryKey: string;
  body: Buffer;
  /** Plaintext `whsec_` secrets, one signature each; none, no `webhook-signature` header (a notification to a contact's webhook). */
  secrets: string[];
  timeoutMs?: number;
  /** Unix seconds for webhook-timestamp (tests inject it). */
  timestamp?: number;
  /**
   * The endpoint's own headers (e.g. Authorization), validated when saved so
   * none of them is one of ours; ours are written after them and win anyway.
   */
  headers?: Record<string, string>;
  /** Present on every connection to the endpoint when set. */
  tls?: ClientTls | null;
};

/** The body of a `hookledger.ping` (test sends and probes): the envelope of a stored event, so a receiver parses it the same way. */
export function pingBody(id: string, subscriptionId: string, purpose: "test" | "probe", now = new Date()): Buffer {
  return Buffer.from(
    JSON.stringify({
      id,
      type: "hookledger.ping",
      timestamp: now.toISOString(),
      data: { subscriptionId, purpose, message: "A ping from hookledger; it carries no data." },
    }),
    "utf8",
  );
}

export class Sender {
  readonly agent: Agent;
  private readonly active = new Set<Exchange>();
  /** One dispatcher per client certificate (ClientTls.id), each with the same SSRF-checked connect. */
  private readonly tlsAgents = new Map<string, { agent: Agent; usedAt: number }>();
  /** Connections being made (TCP connect and TLS handshake) per origin: a request still waiting at its deadline waited on one of them. */
  private readonly connecting = new Map<string, number>();

  constructor(private readonly opts: SenderOptions) {
    this.agent = this.newAgent();
  }

  /**
   * An undici Agent whose every connection goes through the SSRF guard, with
   * the client certificate when given. A certificate only changes the TLS
   * options of the same connector, so mutual TLS cannot bypass the guard.
   */
  private newAgent(tls?: ClientTls): Agent {
    const opts = this.opts;
    const base = buildConnector({
      timeout: opts.connectTimeoutMs ?? 10_000,
      // The SSRF check runs inside the socket's own lookup: what is checked is what is connected to.
      lookup: checkedLookup({ lookup: opts.lookup, allowPrivate: opts.allowPrivate }),
      // A district's private CA is trusted in addition to the public roots, so
      // an endpoint that later moves to a public certificate keeps working.
      ...(tls?.cert ? { cert: tls.cert, key: tls.key } : {}),
      ...(tls?.ca ? { ca: caBundle(tls.ca) } : {}),
    } as buildConnector.BuildOptions);
    const allow = opts.allowPrivate;
    // net.connect skips the lookup for IP literals, so those are checked here.
    const connect: buildConnector.connector = (o, cb) => {
      try {
        checkIpLiteral(o.hostname, allow);
      } catch (err) {
        return cb(err as Error, null);
      }
      const origin = originOf(o.protocol, o.hostname, o.port);
      this.connecting.set(origin, (this.connecting.get(origin) ?? 0) + 1);
      let done = false;
      const connected = () => {
        if (done) return;
        done = true;
        const n = (this.connecting.get(origin) ?? 1) - 1;
        if (n > 0) this.connecting.set(origin, n);
        else this.connecting.delete(origin);
      };
      try {
        return base(o, (...args) => {
          connected();
          (cb as (...a: unknown[]) => void)(...args);
        });
      } catch (err) {
        connected();
        throw err;
      }
    };
    return new Agent({
      connections: opts.connectionsPerOrigin ?? 50,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      connect,
    });
  }

  private dispatcher(tls: ClientTls | null | undefined): Agent {
    if (!tls) return this.agent;
    const now = Date.now();
    let entry = this.tlsAgents.get(tls.id);
    if (!entry) {
      entry = { agent: this.newAgent(tls), usedAt: now };
      this.tlsAgents.set(tls.id, entry);
      // When a certificate is added, dispatchers unused for TLS_AGENT_IDLE_MS (a replaced certificate's) are closed with their keep-alive sockets.
      for (const [id, e] of this.tlsAgents)
        if (now - e.usedAt > TLS_AGENT_IDLE_MS) {
          this.tlsAgents.delete(id);
          void e.agent.close().catch(() => {});
        }
    }
    entry.usedAt = now;
    return entry.agent;
  }

  /**
   * One POST through undici's dispatcher API: a small handler object per
   * request, no body stream, no AbortController (the drain benchmark found
   * those, with the stream machinery, a third of the worker's CPU per send).
   */
  send(req: SendRequest): Promise<SendResult> {
    const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const timestamp = req.timestamp ?? Math.floor(Date.now() / 1000);
    const url = this.target(req.url);
    if (!url) return Promise.resolve({ ...failure("network", `The subscription URL ${JSON.stringify(req.url)} is not a valid URL.`, false), durationMs: 0 });
    return new Promise<SendResult>((resolve) => {
      const x = new Exchange(
        timeoutMs,
        (r) => {
          this.active.delete(x);
          resolve(r);
        },
        () => this.connecting.has(url.origin),
      );
      this.active.add(x);
      try {
        this.dispatcher(req.tls).dispatch(
          {
            origin: url.origin,
            path: url.path,
            method: "POST",
            headers: {
              ...req.headers,
              "content-type": "application/json",
              "user-agent": USER_AGENT,
              "webhook-id": req.deliveryKey,
              "idempotency-key": req.deliveryKey,
              "webhook-timestamp": String(timestamp),
              // No secret, no signature header (undici leaves undefined out): an empty one would claim a signature there is none of.
              "webhook-signature": req.secrets.length > 0 ? signatureHeader(req.secrets.map(this.key), req.deliveryKey, timestamp, req.body) : undefined,
            },
            body: req.body,
            headersTimeout: timeoutMs,
            bodyTimeout: timeoutMs,
          },
          x,
        );
      } catch (err) {
        const [errorClass, ambiguous] = classifyError(err);
        x.finish(failure(errorClass, describe(err), ambiguous));
      }
    });
  }

  // Per-request work that depends only on the subscription: its URL parsed and
  // its secrets decoded once, not on every send (a drain sends thousands a
  // second to the same few URLs).
  private readonly targets = new Map<string, { origin: string; path: string } | null>();
  private readonly keys = new Map<string, Buffer>();

  private target(raw: string): { origin: string; path: string } | null {
    return memoized(this.targets, raw, () => {
      try {
        const u = new URL(raw);
        return { origin: u.origin, path: u.pathname + u.search };
      } catch {
        return null;
      }
    });
  }

  private readonly key = (secret: string): Buffer => memoized(this.keys, secret, () => secretKey(secret));

  /** Ends every request still in flight (worker shutdown after its grace period): each reports `shutdown`. */
  abortAll() {
    for (const x of [...this.active]) x.abort("shutdown");
  }

  async close() {
    await Promise.all([this.agent, ...[...this.tlsAgents.values()].map((e) => e.agent)].map((a) => a.close().catch(() => {})));
    this.tlsAgents.clear();
  }
}

/**
 * One request's life: the timer, the status and headers, the first 4 KB of
 * the answer (the rest read and dropped, up to a limit). It reports once;
 * it never throws for a receiver's failure (docs/STYLE.md #6).
 */
class Exchange implements Dispatcher.DispatchHandler {
  private readonly started = performance.now();
  private readonly timer: NodeJS.Timeout;
  private controller: Dispatcher.DispatchController | null = null;
  /** Set when ended before undici handed the request to a socket: it is then never written. */
  private cancelled: Error | null = null;
  private done = false;
  private statusCode = 0;
  private headers: Record<string, string> | null = null;
  private kept: Buffer[] = [];
  private keptBytes = 0;
  private seen = 0;

  constructor(
    private readonly timeoutMs: number,
    private readonly report: (r: SendResult) => void,
    /** Whether a connection to the endpoint is being made (TCP or TLS handshake) when the request is still waiting. */
    private readonly connecting: () => boolean = () => false,
  ) {
    this.timer = setTimeout(() => this.abort("timeout"), timeoutMs);
  }

  finish(r: Omit<SendResult, "durationMs">) {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    (r as SendResult).durationMs = Math.round(performance.now() - this.started); // r is always a fresh object
    this.report(r as SendResult);
  }

  abort(why: "timeout" | "shutdown") {
    if (this.done) return;
    const onWire = this.controller !== null;
    // Report first: aborting the controller calls onResponseError at once, which must find this exchange done.
    if (why === "shutdown") {
      this.finish(failure("shutdown", "The worker stopped while the request was in flight.", onWire));
    } else if (this.headers) {
      this.respond(); // the status arrived; a body cut at the deadline does not change what the receiver answered
    } else {
      this.finish(onWire ? this.noAnswer() : this.notSent());
    }
    const err = new Error(why);
    if (onWire) this.controller!.abort(err);
    else this.cancelled = err;
  }

  onRequestStart(controller: Dispatcher.DispatchController) {
    this.controller = controller;
    if (this.cancelled) controller.abort(this.cancelled);
  }

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders) {
    if (statusCode < 200) return; // 1xx: the final answer follows
    this.statusCode = statusCode;
    this.headers = flattenHeaders(headers);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer) {
    this.seen += chunk.length;
    if (this.keptBytes < EXCERPT_BYTES) {
      const part = chunk.subarray(0, EXCERPT_BYTES - this.keptBytes);
      this.kept.push(part);
      this.keptBytes += part.length;
    }
    if (this.seen > DRAIN_LIMIT_BYTES) {
      this.respond();
      controller.abort(new Error("answer too large"));
    }
  }

  onResponseEnd() {
    this.respond();
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error) {
    if (this.done) return;
    // The status line arrived; a broken body does not change what the receiver answered.
    if (this.headers) return this.respond();
    if ((err as { code?: string }).code === "UND_ERR_HEADERS_TIMEOUT") return this.finish(this.noAnswer());
    const [errorClass, ambiguous] = classifyError(err);
    this.finish(failure(errorClass, describe(err), ambiguous));
  }

  /**
   * A deadline before the request was written. An endpoint that accepts TCP and never finishes the TLS
   * handshake (or drops the SYN) is a connect timeout, as undici's own connect timeout reports it when
   * the subscription's timeout is the longer one; only a request that waited for a busy connection is not.
   */
  private notSent() {
    return this.connecting()
      ? failure(
          "connect_timeout",
          `The connection to the endpoint (TCP connect or TLS handshake) did not complete within ${this.timeoutMs} ms; the request was not sent.`,
          false,
        )
      : failure("timeout", `No connection to the endpoint was free within ${this.timeoutMs} ms; the request was not sent.`, false);
  }

  /** A timeout after the request went out: the receiver may have it. */
  private noAnswer() {
    return failure("timeout", `No answer within ${this.timeoutMs} ms; the request may have been received.`, true);
  }

  private respond() {
    const headers = this.headers ?? {};
    const status = this.statusCode;
    this.finish({
      outcome: "response",
      statusCode: status,
      errorClass: null,
      // The Location may echo the request's credential; callers redact this message like the excerpt and headers before storing it.
      errorMessage: status >= 300 && status < 400 ? `Redirect to ${headers.location ?? "(no location)"} not followed.` : null,
      retryAfter: headers["retry-after"] ?? null,
      responseExcerpt: excerptText(this.kept, this.keptBytes),
      responseHeaders: headers,
      ambiguous: false,
    });
  }
}

/**
 * What a connection trusts when its subscription names a CA: the public roots, the operator's own extra CAs
 * (NODE_EXTRA_CA_CERTS, which Node adds to its default trust but not to a `ca` given in full) and the district's
 * CA. The extra file is read once per process; unreadable, it adds nothing (Node has already warned at start).
 */
export function caBundle(ca: string, extraFile: string | undefined = process.env.NODE_EXTRA_CA_CERTS): string[] {
  return [...rootCertificates, ...extraCas(extraFile), ca];
}

const extraCaCache = new Map<string, string[]>();
function extraCas(file: string | undefined): string[] {
  if (!file) return [];
  return memoized(extraCaCache, file, () => {
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch {
      // Node reports an unreadable NODE_EXTRA_CA_CERTS itself when the process starts.
    }
    return text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  });
}

/** The origin a connector's options name, as URL.origin writes it (a default port left out). */
function originOf(protocol: string, hostname: string, port: string | number): string {
  const host = hostname.includes(":") && !hostname.startsWith("[") ? `[${hostname}]` : hostname;
  try {
    return new URL(`${protocol}//${host}${port ? `:${port}` : ""}`).origin;
  } catch {
    return `${protocol}//${host}:${port}`;
  }
}

function failure(errorClass: ErrorClass, message: string, ambiguous: boolean): Omit<SendResult, "durationMs"> {
  return {
    outcome: "error",
    statusCode: null,
    errorClass,
    errorMessage: message,
    retryAfter: null,
    responseExcerpt: null,
    responseHeaders: null,
    ambiguous,
  };
}

function flattenHeaders(h: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in h) {
    const v = h[k];
    if (v !== undefined) out[k] = (typeof v === "string" ? v : v.join(", ")).slice(0, 1024);
  }
  return out;
}

/** The kept first 4 KB of the answer as text. */
function excerptText(kept: Buffer[], keptBytes: number): string | null {
  if (keptBytes === 0) return null;
  // Cut at a character boundary and drop NULs (Postgres text cannot hold them).
  return Buffer.concat(kept)
    .toString("utf8")
    .replace(/\uFFFD+$/, "")
    .replace(/\u0000/g, "");
}

function codeOf(err: unknown): string {
  const e = err as { code?: string; cause?: { code?: string } };
  return e?.code ?? e?.cause?.code ?? "";
}

/** The error class of a transport failure, and whether the request may have reached the receiver. */
function classifyError(err: unknown): [ErrorClass, boolean] {
  if (err instanceof TargetBlockedError || (err as Error)?.name === "TargetBlockedError" || codeOf(err) === "HL_TARGET_BLOCKED") return ["target_blocked", false];
  const code = codeOf(err);
  if (code === "ECONNREFUSED" || code === "EHOSTUNREACH" || code === "ENETUNREACH" || code === "EADDRNOTAVAIL") return ["connect_refused", false];
  if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_NONAME" || code === "EAI_FAIL") return ["dns", false];
  if (code === "UND_ERR_CONNECT_TIMEOUT") return ["connect_timeout", false];
  if (/^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|ERR_OSSL)/.test(code)) return ["tls", false];
  if (code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT" || code === "ETIMEDOUT") return ["timeout", true];
  if (code === "ECONNRESET" || code === "UND_ERR_SOCKET" || code === "EPIPE" || code === "UND_ERR_CLOSED") return ["reset", true];
  return ["network", true];
}

function describe(err: unknown): string {
  const e = err as Error & { code?: string; cause?: Error & { code?: string } };
  const code = codeOf(err);
  const msg = e?.message || String(err);
  const cause = e?.cause?.message && e.cause.message !== msg ? `: ${e.cause.message}` : "";
  return `${code ? `${code}: ` : ""}${msg}${cause}`.slice(0, 1000);
}

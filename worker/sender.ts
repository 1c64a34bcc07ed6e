// The HTTP sender: one POST of the stored bytes, signed, with a timeout, no
// redirects, a bounded read of the answer. It reports; it never throws for a
// receiver's failure (STYLE.md #6). Classification is lib/ledger/classify.ts.
import { Agent, buildConnector } from "undici";
import type { Dispatcher } from "undici";
import { signatureHeader } from "../lib/signing/standard-webhooks";
import type { ErrorClass, SendResult } from "../lib/ledger/classify";
import { checkIpLiteral, checkedLookup, TargetBlockedError, type LookupFunction } from "../lib/net/ssrf";
import pkg from "../package.json" with { type: "json" };

export const USER_AGENT = `hookledger/${pkg.version}`;
/** attempts.response_excerpt holds at most 4 KB. */
export const EXCERPT_BYTES = 4096;
/** Past this much of an answer we stop reading and drop the connection. */
const DRAIN_LIMIT_BYTES = 256 * 1024;
export const DEFAULT_TIMEOUT_MS = 15_000;

export type SenderOptions = {
  /** Keep-alive connections per origin (one district's endpoint). */
  connectionsPerOrigin?: number;
  /** A DNS lookup for tests; every address it returns passes the SSRF guard. */
  lookup?: LookupFunction;
  /** Lifts the SSRF guard (HOOKLEDGER_ALLOW_PRIVATE_TARGETS=1). */
  allowPrivate: boolean;
  connectTimeoutMs?: number;
};

export type SendRequest = {
  url: string;
  deliveryKey: string;
  body: Buffer;
  /** Plaintext `whsec_` secrets, one signature each. */
  secrets: string[];
  timeoutMs?: number;
  /** Unix seconds for webhook-timestamp (tests inject it). */
  timestamp?: number;
  signal?: AbortSignal;
};

export class Sender {
  readonly agent: Agent;
  private readonly allowPrivate: boolean;

  constructor(opts: SenderOptions) {
    this.allowPrivate = opts.allowPrivate;
    const base = buildConnector({
      timeout: opts.connectTimeoutMs ?? 10_000,
      // The SSRF check runs inside the socket's own lookup: what is checked is what is connected to.
      lookup: checkedLookup({ lookup: opts.lookup, allowPrivate: opts.allowPrivate }),
    } as buildConnector.BuildOptions);
    const allow = opts.allowPrivate;
    // net.connect skips the lookup for IP literals, so those are checked here.
    const connect: buildConnector.connector = (o, cb) => {
      try {
        checkIpLiteral(o.hostname, allow);
      } catch (err) {
        return cb(err as Error, null);
      }
      return base(o, cb);
    };
    this.agent = new Agent({
      connections: opts.connectionsPerOrigin ?? 50,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      connect,
    });
  }

  async send(req: SendRequest): Promise<SendResult> {
    const started = performance.now();
    const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const timestamp = req.timestamp ?? Math.floor(Date.now() / 1000);
    const done = (r: Omit<SendResult, "durationMs">): SendResult => ({ ...r, durationMs: Math.round(performance.now() - started) });
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return done(failure("network", `The subscription URL ${JSON.stringify(req.url)} is not a valid URL.`, false));
    }
    const timeout = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      timeout.abort(new Error("timeout"));
    }, timeoutMs);
    const onOuterAbort = () => timeout.abort(req.signal?.reason ?? new Error("aborted"));
    req.signal?.addEventListener("abort", onOuterAbort, { once: true });
    try {
      const res = await this.agent.request({
        origin: url.origin,
        path: url.pathname + url.search,
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": USER_AGENT,
          "webhook-id": req.deliveryKey,
          "idempotency-key": req.deliveryKey,
          "webhook-timestamp": String(timestamp),
          "webhook-signature": signatureHeader(req.secrets, req.deliveryKey, timestamp, req.body),
        },
        body: req.body,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: timeout.signal,
      });
      const excerpt = await readExcerpt(res.body);
      const headers = flattenHeaders(res.headers);
      const status = res.statusCode;
      return done({
        outcome: "response",
        statusCode: status,
        errorClass: null,
        errorMessage: status >= 300 && status < 400 ? `Redirect to ${headers.location ?? "(no location)"} not followed.` : null,
        retryAfter: headers["retry-after"] ?? null,
        responseExcerpt: excerpt,
        responseHeaders: headers,
        ambiguous: false,
      });
    } catch (err) {
      if (timedOut) return done(failure("timeout", `No answer within ${timeoutMs} ms; the request may have been received.`, true));
      if (req.signal?.aborted) return done(failure("shutdown", "The worker stopped while the request was in flight.", true));
      const [errorClass, ambiguous] = classifyError(err);
      return done(failure(errorClass, describe(err), ambiguous));
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener("abort", onOuterAbort);
    }
  }

  async close() {
    await this.agent.close().catch(() => {});
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
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k] = (Array.isArray(v) ? v.join(", ") : v).slice(0, 1024);
  return out;
}

/** The first 4 KB of the answer as text; the rest is read and dropped, up to a limit. */
async function readExcerpt(body: Dispatcher.ResponseData["body"]): Promise<string | null> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let seen = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      seen += chunk.length;
      if (keptBytes < EXCERPT_BYTES) {
        const part = chunk.subarray(0, EXCERPT_BYTES - keptBytes);
        kept.push(part);
        keptBytes += part.length;
      }
      if (seen > DRAIN_LIMIT_BYTES) {
        body.destroy();
        break;
      }
    }
  } catch {
    // The status line arrived; a broken body does not change what the receiver answered.
  }
  if (keptBytes === 0) return null;
  // Cut at a character boundary and drop NULs (Postgres text cannot hold them).
  return Buffer.concat(kept).toString("utf8").replace(/\uFFFD+$/, "").replace(/\u0000/g, "");
}

function codeOf(err: unknown): string {
  const e = err as { code?: string; cause?: { code?: string } };
  return e?.code ?? e?.cause?.code ?? "";
}

/** The error class of a transport failure, and whether the request may have reached the receiver. */
export function classifyError(err: unknown): [ErrorClass, boolean] {
  if (err instanceof TargetBlockedError || (err as Error)?.name === "TargetBlockedError" || codeOf(err) === "HL_TARGET_BLOCKED")
    return ["target_blocked", false];
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

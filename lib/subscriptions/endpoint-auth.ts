// Endpoint authentication: the extra request headers a district's gateway
// wants (a bearer token, an API key) and an optional client certificate for
// mutual TLS. Both are write-only: validated here when saved, sealed into
// their own columns (lib/subscriptions/secrets.ts), and only ever shown as
// their non-secret views (header names with masked values; the certificate's
// subject and expiry). The worker and the test send open them to send.
import "server-only";
import { X509Certificate, createHash, createPrivateKey, type KeyObject } from "node:crypto";
import { z } from "zod";
import { AppError } from "../errors";
import { openEndpointValue } from "./secrets";
import { maskCredentials } from "../net/redact";

/** RFC 7230 token: what a header name may be. */
const TOKEN_RE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/**
 * A field value: visible ASCII, spaces, tabs and Latin-1 (RFC 7230 obs-text);
 * no CR, LF, NUL or other controls (header injection), and nothing past
 * U+00FF, which HTTP/1.1 cannot carry and the client would mangle.
 */
const VALUE_RE = /^[\t\x20-\x7e\xa0-\xff]*$/;
const MAX_HEADERS = 20;
const MAX_HEADER_BYTES = 8 * 1024;
const MAX_PEM_CHARS = 64 * 1024;

/**
 * Names hookledger writes itself, or that would break the request framing:
 * the transport's (Host, Content-Length, hop-by-hop headers) and the
 * signature's (webhook-*, and the idempotency key and content type the
 * signature covers in meaning). Proxy-* is hop-by-hop too.
 */
const RESERVED: Record<string, string> = {
  host: "the transport sets Host from the URL",
  "content-length": "the transport sets Content-Length from the body",
  "content-type": "hookledger sends application/json",
  "idempotency-key": "hookledger sets it to the delivery's webhook-id",
  connection: "a hop-by-hop header",
  "transfer-encoding": "a hop-by-hop header",
  "keep-alive": "a hop-by-hop header",
  te: "a hop-by-hop header",
  upgrade: "a hop-by-hop header",
  trailer: "a hop-by-hop header",
  // The HTTP client refuses to send Expect at all (every delivery would fail).
  expect: "the HTTP client does not send Expect (it would make every delivery fail)",
  "user-agent": "hookledger sets User-Agent itself",
  "hookledger-test": "hookledger marks its test sends with it",
};

function reservedHeaderReason(name: string): string | null {
  const n = name.toLowerCase();
  if (RESERVED[n]) return RESERVED[n];
  if (n.startsWith("proxy-")) return "a hop-by-hop header (Proxy-*)";
  if (n.startsWith("webhook-")) return "webhook-* headers are the Standard Webhooks signature's, set by hookledger";
  return null;
}

/** The `headers` field of a subscription create or update: name → value, or null to clear. */
export const ZEndpointHeaders = z.record(z.string(), z.string()).superRefine((h, ctx) => {
  const names = Object.keys(h);
  if (names.length > MAX_HEADERS) ctx.addIssue({ code: "custom", message: `at most ${MAX_HEADERS} headers (got ${names.length})` });
  const seen = new Set<string>();
  let bytes = 0;
  for (const name of names) {
    const value = h[name];
    bytes += Buffer.byteLength(name) + Buffer.byteLength(value) + 4; // "name: value\r\n"
    if (!TOKEN_RE.test(name)) {
      ctx.addIssue({ code: "custom", path: [name], message: `${JSON.stringify(name)} is not a header name (letters, digits and !#$%&'*+-.^_\`|~ only)` });
      continue;
    }
    const reserved = reservedHeaderReason(name);
    if (reserved) ctx.addIssue({ code: "custom", path: [name], message: `${name} cannot be set: ${reserved}` });
    if (seen.has(name.toLowerCase())) ctx.addIssue({ code: "custom", path: [name], message: `${name} is given twice (header names are case-insensitive)` });
    seen.add(name.toLowerCase());
    // The value is never echoed: it is a credential.
    if (!VALUE_RE.test(value))
      ctx.addIssue({
        code: "custom",
        path: [name],
        message: `the value of ${name} contains CR, LF, another control character or a character HTTP headers cannot carry (past U+00FF)`,
      });
    else if (value.trim() === "") ctx.addIssue({ code: "custom", path: [name], message: `the value of ${name} is empty` });
  }
  if (bytes > MAX_HEADER_BYTES) ctx.addIssue({ code: "custom", message: `the headers come to ${bytes} bytes; at most ${MAX_HEADER_BYTES}` });
});
export type TEndpointHeaders = z.infer<typeof ZEndpointHeaders>;

const pem = (what: string) => z.string().min(1, `${what} is empty`).max(MAX_PEM_CHARS, `${what} is longer than ${MAX_PEM_CHARS} characters`);

/**
 * The `tls` field: a client certificate and its key (PEM), a CA bundle to
 * trust, or both; or null to clear. The CA alone serves an endpoint whose
 * certificate a private CA signed (or that is self-signed) and that asks for
 * no client certificate.
 */
export const ZEndpointTls = z
  .object({ clientCertificate: pem("clientCertificate").optional(), clientKey: pem("clientKey").optional(), ca: pem("ca").optional() })
  .strict()
  .superRefine((t, ctx) => {
    if (t.clientCertificate === undefined && t.clientKey === undefined && t.ca === undefined)
      ctx.addIssue({ code: "custom", message: "give clientCertificate and clientKey (mutual TLS), ca (a CA to trust), or all three; null removes them" });
    else if (t.clientCertificate === undefined && t.clientKey !== undefined)
      ctx.addIssue({ code: "custom", path: ["clientCertificate"], message: "clientCertificate is required with clientKey" });
    else if (t.clientKey === undefined && t.clientCertificate !== undefined)
      ctx.addIssue({ code: "custom", path: ["clientKey"], message: "clientKey is required with clientCertificate" });
    else for (const issue of tlsProblems(t)) ctx.addIssue({ code: "custom", path: [issue.path], message: issue.message });
  });
export type TEndpointTls = z.infer<typeof ZEndpointTls>;

const PEM_CERT_RE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

function firstLine(err: unknown): string {
  return String((err as Error)?.message ?? err).split("\n")[0];
}

/** The client key types accepted, as said in the refusal. */
const ACCEPTED_CLIENT_KEYS = "RSA up to 4096 bits, EC P-256 or P-384, or Ed25519";
const MAX_RSA_BITS = 4096;
const ACCEPTED_CURVES = new Set(["prime256v1", "secp384r1"]);

/**
 * Why a client key is refused, or null. Every handshake to the endpoint signs
 * with this key on the shared worker, so its cost is bounded: an RSA-16384 key
 * costs about half a second of CPU per handshake, and odd curves or DSA are
 * what TLS peers commonly refuse anyway.
 */
function clientKeyKindProblem(key: KeyObject): string | null {
  const type = key.asymmetricKeyType;
  const d = key.asymmetricKeyDetails ?? {};
  if ((type === "rsa" || type === "rsa-pss") && (d.modulusLength ?? Infinity) <= MAX_RSA_BITS) return null;
  if (type === "ec" && d.namedCurve && ACCEPTED_CURVES.has(d.namedCurve)) return null;
  if (type === "ed25519") return null;
  const what =
    type === "rsa" || type === "rsa-pss"
      ? `an RSA key of ${d.modulusLength} bits`
      : type === "ec"
        ? `an EC key on curve ${d.namedCurve ?? "unknown"}`
        : `a key of type ${type ?? "unknown"}`;
  return `clientKey is ${what}; accepted: ${ACCEPTED_CLIENT_KEYS}`;
}

/** What is wrong with a client certificate, its key and CA bundle (empty when they parse and match). */
export function tlsProblems(t: { clientCertificate?: string; clientKey?: string; ca?: string }, now = new Date()): { path: string; message: string }[] {
  const out: { path: string; message: string }[] = [];
  if (t.clientCertificate !== undefined && t.clientKey !== undefined)
    out.push(...clientPairProblems({ clientCertificate: t.clientCertificate, clientKey: t.clientKey }, now));
  if (t.ca !== undefined) {
    const blocks = t.ca.match(PEM_CERT_RE) ?? [];
    if (blocks.length === 0) out.push({ path: "ca", message: "ca holds no PEM certificate (-----BEGIN CERTIFICATE-----)" });
    for (const [i, b] of blocks.entries())
      try {
        new X509Certificate(b);
      } catch (err) {
        out.push({ path: "ca", message: `certificate ${i + 1} of ca does not parse (${firstLine(err)})` });
      }
  }
  return out;
}

function clientPairProblems(t: { clientCertificate: string; clientKey: string }, now: Date): { path: string; message: string }[] {
  const out: { path: string; message: string }[] = [];
  let cert: X509Certificate | null = null;
  let key: KeyObject | null = null;
  if (!t.clientCertificate.includes("-----BEGIN CERTIFICATE-----"))
    out.push({ path: "clientCertificate", message: "clientCertificate is not a PEM certificate (-----BEGIN CERTIFICATE-----)" });
  else
    try {
      cert = new X509Certificate(t.clientCertificate);
      if (new Date(cert.validTo) < now) out.push({ path: "clientCertificate", message: `the client certificate expired on ${new Date(cert.validTo).toISOString()}` });
    } catch (err) {
      out.push({ path: "clientCertificate", message: `clientCertificate does not parse as an X.509 certificate (${firstLine(err)})` });
    }
  try {
    key = createPrivateKey(t.clientKey);
  } catch (err) {
    const msg = firstLine(err);
    out.push({
      path: "clientKey",
      message: /passphrase|encrypted/i.test(msg + t.clientKey)
        ? "clientKey is encrypted; give the key unencrypted (it is stored encrypted)"
        : `clientKey does not parse as a PEM private key (${msg})`,
    });
  }
  if (key) {
    const kind = clientKeyKindProblem(key);
    if (kind) {
      out.push({ path: "clientKey", message: kind });
      key = null;
    }
  }
  if (cert && key && !cert.checkPrivateKey(key))
    out.push({ path: "clientKey", message: "clientKey does not match clientCertificate (it is the key of another certificate)" });
  return out;
}

/** What a read shows for the headers: each name with its value masked ("Bearer ••••" keeps an Authorization scheme). */
export type HeaderView = Record<string, string>;
export const MASK = "••••";

export function maskHeaders(h: TEndpointHeaders): HeaderView {
  const out: HeaderView = {};
  for (const [name, value] of Object.entries(h)) {
    const scheme = /^(authorization|proxy-authorization)$/i.test(name) ? value.match(/^([A-Za-z][A-Za-z0-9-]{0,19}) +\S/) : null;
    out[name] = scheme ? `${scheme[1]} ${MASK}` : MASK;
  }
  return out;
}

/** What a read shows for the client certificate (its fields null when only a CA is set). */
export type TlsView = { set: true; subject: string | null; issuer: string | null; expiresAt: string | null; fingerprint256: string | null; ca: boolean };

export function tlsView(t: TEndpointTls): TlsView {
  if (t.clientCertificate === undefined) return { set: true, subject: null, issuer: null, expiresAt: null, fingerprint256: null, ca: true };
  const cert = new X509Certificate(t.clientCertificate);
  return {
    set: true,
    subject: cert.subject.split("\n").join(", "),
    issuer: cert.issuer.split("\n").join(", "),
    expiresAt: new Date(cert.validTo).toISOString(),
    fingerprint256: cert.fingerprint256,
    ca: t.ca !== undefined,
  };
}

/** The endpoint authentication a request to the subscription carries, opened from its sealed columns. */
export type EndpointAuth = { headers: Record<string, string>; tls: { id: string; cert?: string; key?: string; ca?: string } | null };

export function openEndpointAuth(subscriptionId: string, sealed: { headers: string | null; tls: string | null }): EndpointAuth {
  const headers = sealed.headers ? (JSON.parse(openEndpointValue(sealed.headers, { subscriptionId, column: "headers" })) as Record<string, string>) : {};
  let tls: EndpointAuth["tls"] = null;
  if (sealed.tls) {
    const t = JSON.parse(openEndpointValue(sealed.tls, { subscriptionId, column: "tls" })) as TEndpointTls;
    // Names the material, not the subscription: two subscriptions with one certificate may share connections, a new certificate gets new ones.
    const id = createHash("sha256")
      .update(t.clientCertificate ?? "")
      .update("\0")
      .update(t.clientKey ?? "")
      .update("\0")
      .update(t.ca ?? "")
      .digest("base64url");
    tls = { id, ...(t.clientCertificate && t.clientKey ? { cert: t.clientCertificate, key: t.clientKey } : {}), ...(t.ca ? { ca: t.ca } : {}) };
  }
  return { headers, tls };
}

/**
 * `text` with every configured credential value replaced by the mask: an
 * endpoint that echoes its request (a debugging receiver, an error page, a
 * gateway that puts it in a redirect's Location) would otherwise put the
 * bearer token into the stored answer. Its URL-encoded, JSON-escaped and
 * base64 forms are masked too, as are the token after an Authorization
 * scheme and what a Basic token decodes to (lib/net/redact.ts). Values
 * shorter than 6 characters are left alone (they would mask ordinary words).
 */
export function redactSecrets(text: string | null, values: string[]): string | null {
  if (text === null || values.length === 0) return text;
  return maskCredentials(text, values, MASK);
}

/**
 * A client certificate is presented only in a TLS handshake: on an http://
 * URL it would silently never be sent. Throws the 400 that says so.
 */
export function assertTlsHasHttps(url: string, tlsSet: boolean): void {
  if (tlsSet && !url.startsWith("https:"))
    throw new AppError("validation_failed", "tls: a client certificate or CA needs an https:// url (over http:// there is no TLS handshake to use them in).", [
      { path: "body.tls", message: "needs an https url" },
    ]);
}

function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/**
 * Endpoint headers and the client certificate are credentials for one
 * endpoint. A change of the URL's origin (scheme, host, port) would send them
 * to whatever host the new URL names (an update could point the subscription
 * at a host its author controls and collect the district's Authorization
 * value on the next send), so such an update must restate them: give
 * `headers` and `tls` again, or null to drop them. Throws the 400 otherwise,
 * before anything is written.
 */
export function assertEndpointAuthRestated(
  before: { url: string; endpointHeaders: string | null; endpointTls: string | null },
  input: { url?: string; headers?: unknown; tls?: unknown },
): void {
  if (input.url === undefined || origin(input.url) === origin(before.url)) return;
  const missing: ("headers" | "tls")[] = [];
  if (before.endpointHeaders !== null && input.headers === undefined) missing.push("headers");
  if (before.endpointTls !== null && input.tls === undefined) missing.push("tls");
  if (missing.length === 0) return;
  const what = missing.map((m) => (m === "headers" ? "endpoint headers" : "client certificate")).join(" and ");
  throw new AppError(
    "endpoint_auth_must_be_restated",
    `url: the new URL is on another origin (${origin(input.url)}, was ${origin(before.url)}) and this subscription has stored ${what}; ` +
      `give ${missing.join(" and ")} again in the same request (or null to drop them), so they are not sent to the new host unawares.`,
    missing.map((m) => ({ path: `body.${m}`, message: "must be given again (or null) when the url's origin changes" })),
  );
}

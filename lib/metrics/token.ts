// Who may read /metrics (the dashboard's and every worker's) and the details
// of /api/health. The series name every subscription and count its traffic,
// so they are not served to anyone who can reach the port:
//  - HOOKLEDGER_METRICS_TOKEN set: every request must send `Authorization: Bearer <token>`;
//  - else open only when the endpoint listens on loopback (nothing off the
//    machine can reach it), or when the operator opts out explicitly with
//    HOOKLEDGER_METRICS_PUBLIC=1;
//  - else refused, with a message that says which of the three to do.
import "server-only";
import crypto from "node:crypto";

const METRICS_TOKEN_ENV = "HOOKLEDGER_METRICS_TOKEN";
const METRICS_PUBLIC_ENV = "HOOKLEDGER_METRICS_PUBLIC";

export function isLoopbackHost(host: string | undefined | null): boolean {
  if (!host) return false;
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** True when `authorization` carries exactly `expected` (compared in constant time). False when no token is configured. */
export function metricsTokenAccepts(authorization: string | null | undefined, expected = process.env[METRICS_TOKEN_ENV]): boolean {
  if (!expected) return false;
  const m = authorization?.match(/^Bearer\s+(\S+)$/i);
  if (!m) return false;
  const a = crypto.createHash("sha256").update(m[1]).digest();
  const b = crypto.createHash("sha256").update(expected).digest();
  return crypto.timingSafeEqual(a, b);
}

export type MetricsAccess = { ok: true } | { ok: false; message: string };

export function metricsAccess(authorization: string | null | undefined, opts: { loopback?: boolean; token?: string; public?: boolean } = {}): MetricsAccess {
  const token = opts.token ?? process.env[METRICS_TOKEN_ENV];
  if (token)
    return metricsTokenAccepts(authorization, token) ? { ok: true } : { ok: false, message: `Unauthorized: send \`Authorization: Bearer $${METRICS_TOKEN_ENV}\`.` };
  if (opts.loopback || (opts.public ?? process.env[METRICS_PUBLIC_ENV] === "1")) return { ok: true };
  return {
    ok: false,
    message: `Unauthorized: metrics name every subscription, so they need a token. Set ${METRICS_TOKEN_ENV} and send \`Authorization: Bearer <token>\`, listen on 127.0.0.1, or set ${METRICS_PUBLIC_ENV}=1 to serve them to anyone who can reach the port.`,
  };
}

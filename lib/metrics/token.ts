import crypto from "node:crypto";

/**
 * The opt-in bearer token for /metrics (the dashboard's and every worker's):
 * HOOKLEDGER_METRICS_TOKEN unset or empty → open; set → the request must send it.
 */
export function metricsTokenAccepts(authorization: string | null | undefined, expected = process.env.HOOKLEDGER_METRICS_TOKEN): boolean {
  if (!expected) return true;
  const m = authorization?.match(/^Bearer\s+(\S+)$/i);
  if (!m) return false;
  const a = crypto.createHash("sha256").update(m[1]).digest();
  const b = crypto.createHash("sha256").update(expected).digest();
  return crypto.timingSafeEqual(a, b);
}

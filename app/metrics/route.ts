// GET /metrics: Prometheus text format. The ledger-derived gauges and this
// process's HTTP API metrics; each worker serves its own per-process counters
// (worker/metrics-server.ts). deploy/prometheus/README.md has the scrape model.
//
// No token by default: Prometheus scrapes without credentials in most setups,
// and the series carry subscription ids and counts, not payloads or secrets.
// Set HOOKLEDGER_METRICS_TOKEN to require `Authorization: Bearer <token>`
// (Prometheus: `authorization: {credentials: …}` in the scrape config).
import { getPool } from "@/lib/db/pool";
import { renderDashboardMetrics } from "@/lib/metrics/dashboard";
import { metricsTokenAccepts } from "@/lib/metrics/token";

export const dynamic = "force-dynamic";

export async function GET(req: Request) {
  if (!metricsTokenAccepts(req.headers.get("authorization")))
    return new Response("Unauthorized: send `Authorization: Bearer $HOOKLEDGER_METRICS_TOKEN`.\n", {
      status: 401,
      headers: { "content-type": "text/plain; charset=utf-8", "www-authenticate": 'Bearer realm="hookledger metrics"' },
    });
  const { text, contentType } = await renderDashboardMetrics(getPool());
  return new Response(text, { status: 200, headers: { "content-type": contentType, "cache-control": "no-store" } });
}

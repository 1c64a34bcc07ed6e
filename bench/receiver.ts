// The local receiver every scenario posts to: a node:http server on 127.0.0.1
// in its own process (so it does not share an event loop with the worker or
// the load generator). Paths:
//   POST /ok/...     reads the body, answers 204
//   POST /hang/...   reads the body and never answers (the worker's timeout ends it)
//   GET  /__stats    {"total", "byPrefix": {"ok": n, "hang": n}}
// Prints "READY <port>" on stdout when listening.
import http from "node:http";
import type { AddressInfo } from "node:net";

const counts = new Map<string, number>();
let total = 0;

const server = http.createServer((req, res) => {
  const url = req.url ?? "/";
  if (req.method === "GET" && url === "/__stats") {
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ total, byPrefix: Object.fromEntries(counts) }));
    return;
  }
  const prefix = url.split("/")[1] ?? "";
  req.on("data", () => {});
  req.on("end", () => {
    total++;
    counts.set(prefix, (counts.get(prefix) ?? 0) + 1);
    if (prefix === "hang") return; // held until the client gives up
    res.statusCode = 204;
    res.end();
  });
});
server.keepAliveTimeout = 60_000;
server.headersTimeout = 0;
server.requestTimeout = 0;
server.maxRequestsPerSocket = 0;
server.listen(Number(process.argv[2] ?? 0), "127.0.0.1", () => {
  process.stdout.write(`READY ${(server.address() as AddressInfo).port}\n`);
});
process.on("SIGTERM", () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 500).unref();
});
process.on("disconnect", () => process.exit(0));

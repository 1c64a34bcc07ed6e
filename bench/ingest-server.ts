// The ingest route handler (app/api/v1/events/route.ts, the same function
// `next start` serves) mounted in a plain node:http server, in its own process.
//   POST /api/v1/events   the real handler: bearer token, zod, publishEvent in a transaction
//   POST /noop            the same adapter (body read, web Request built, JSON Response written)
//                         around a handler that does nothing: the reference for this server
// Prints "READY <port>".
import http from "node:http";
import type { AddressInfo } from "node:net";
import { POST } from "../app/api/v1/events/route";

async function noop(req: Request): Promise<Response> {
  const body = await req.json();
  return new Response(JSON.stringify({ eventId: (body as { id?: string }).id ?? null, deliveries: [] }), {
    status: 202,
    headers: { "content-type": "application/json; charset=utf-8" },
  });
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", async () => {
    try {
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
      const request = new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
      const handler = req.url === "/api/v1/events" ? POST : req.url === "/noop" ? noop : null;
      if (!handler) {
        res.statusCode = 404;
        res.end();
        return;
      }
      const response = await handler(request);
      res.statusCode = response.status;
      response.headers.forEach((v, k) => res.setHeader(k, v));
      res.end(Buffer.from(await response.arrayBuffer()));
    } catch (err) {
      res.statusCode = 500;
      res.end(String(err));
    }
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => process.stdout.write(`READY ${(server.address() as AddressInfo).port}\n`));
process.on("SIGTERM", () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 500).unref();
});

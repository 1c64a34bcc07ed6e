// The ingest route handler (app/api/v1/events/route.ts, the same function
// `next start` serves) mounted in a plain node:http server, in its own process.
//   POST /api/v1/events   the real handler: bearer token (producer lookups cached, lib/auth/tokens.ts),
//                         zod, then group commit (lib/events/ingest.ts): concurrent events in one
//                         raw-pg statement per group
//   POST /noop            the same adapter (body read, web Request built, JSON Response written)
//                         around a handler that does nothing: the reference for this server
//   POST /what-if/one-statement   the earlier sketch (BENCHMARKS.md F5), kept for comparison with the
//                         route: the same validation and bytes, the token checked and ONE event and
//                         its deliveries written in one statement per request over raw pg, no grouping
// Prints "READY <port>".
import http from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { POST } from "../app/api/v1/events/route";
import { ZCreateEvent } from "../lib/events/schema";
import { envelopeBytes, subjectValues } from "../lib/events/publish";
import { hashToken } from "../lib/auth/tokens";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
pool.on("error", () => {});

async function oneStatement(req: Request): Promise<Response> {
  const token = (req.headers.get("authorization") ?? "").replace(/^Bearer\s+/i, "");
  const event = ZCreateEvent.parse(await req.json());
  const occurredAt = event.occurredAt ? new Date(event.occurredAt) : new Date();
  const subject = event.subject ?? {};
  const tenant = subject.tenant !== undefined ? String(subject.tenant) : null;
  const { rows } = await pool.query(
    `WITH tok AS (SELECT 1 FROM api_tokens WHERE token_hash = $1 AND revoked_at IS NULL AND role IN ('producer', 'admin')),
     ev AS (
       INSERT INTO events (id, type, payload, occurred_at, tenant, subject, subject_values)
       SELECT $2, $3, $4, $5, $6, $7::jsonb, $8::text[] WHERE EXISTS (SELECT 1 FROM tok)
       ON CONFLICT (id) DO NOTHING RETURNING id),
     dl AS (
       INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type)
       SELECT encode(sha256(convert_to(s.id || ':' || ev.id, 'UTF8')), 'hex'), ev.id, s.id, $3
         FROM ev, subscriptions s
        WHERE (s.event_types @> ARRAY[$3]::text[] OR s.event_types @> ARRAY['*']::text[]) AND (s.tenant IS NULL OR s.tenant = $6)
       RETURNING id, subscription_id AS "subscriptionId", delivery_key AS "deliveryKey")
     SELECT dl.*, (SELECT pg_notify('hookledger_deliveries', '')) AS n FROM dl`,
    [hashToken(token), event.id, event.type, envelopeBytes(event, occurredAt), occurredAt, tenant, JSON.stringify(subject), subjectValues(subject)],
  );
  return new Response(JSON.stringify({ eventId: event.id, deliveries: rows.map(({ n: _n, ...d }) => d) }), {
    status: 202,
    headers: { "content-type": "application/json; charset=utf-8" },
  });
}

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
      const handler = req.url === "/api/v1/events" ? POST : req.url === "/noop" ? noop : req.url === "/what-if/one-statement" ? oneStatement : null;
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

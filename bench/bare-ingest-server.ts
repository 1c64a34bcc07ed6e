// The ingest route handler (app/api/v1/events/route.ts, the same function
// `next start` serves) mounted in a plain node:http server, in its own process.
//   POST /api/v1/events   the real handler: bearer token (producer lookups cached, lib/auth/tokens.ts),
//                         zod, then group commit (lib/events/ingest.ts): concurrent events in one
//                         raw-pg statement per group
//   POST /api/v1/events/batch  the real batch handler (app/api/v1/events/batch/route.ts): up to 500
//                         events a request, through the same group commit
//   POST /api/v1/subscriptions  the real create handler: the endpoints step makes its subscriptions through it,
//                         as a new user would (a new district's tenant is registered with its first subscription)
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
import { POST as POST_BATCH } from "../app/api/v1/events/batch/route";
import { POST as POST_SUBSCRIPTION } from "../app/api/v1/subscriptions/route";
import { ZCreateEvent } from "../lib/events/event-input";
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
    `SELECT x.delivery_id AS id, x.subscription_id AS "subscriptionId", x.delivery_key AS "deliveryKey"
       FROM (SELECT 1 FROM api_tokens WHERE token_hash = $1 AND revoked_at IS NULL AND role IN ('producer', 'admin')) tok,
            LATERAL hl_enqueue_events(ARRAY[$2]::text[], ARRAY[$3]::text[], ARRAY[$4::bytea], ARRAY[$5::timestamptz], ARRAY[$6]::text[], ARRAY[$7::jsonb],
                                      $8::text[], ARRAY[1], ARRAY[cardinality($8::text[])]) x
      WHERE x.delivery_id IS NOT NULL`,
    [hashToken(token), event.id, event.type, envelopeBytes(event, occurredAt), occurredAt, tenant, JSON.stringify(subject), subjectValues(subject)],
  );
  return new Response(JSON.stringify({ eventId: event.id, deliveries: rows }), {
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

const ROUTES: Record<string, (req: Request) => Promise<Response>> = {
  "/api/v1/events": POST,
  "/api/v1/events/batch": POST_BATCH,
  "/api/v1/subscriptions": POST_SUBSCRIPTION,
  "/noop": noop,
  "/what-if/one-statement": oneStatement,
};

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", async () => {
    try {
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
      const request = new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
      const handler = ROUTES[(req.url ?? "/").split("?")[0]] ?? null;
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

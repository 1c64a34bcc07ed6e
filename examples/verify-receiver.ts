// A district's webhook receiver that verifies hookledger's signatures with the
// Standard Webhooks library (npm `standardwebhooks`; the same scheme has
// libraries for Python, Go, Ruby, PHP, Java, C#, Rust and Elixir).
//
//   WEBHOOK_SECRET=whsec_… PORT=8080 node bin/run-ts.mjs examples/verify-receiver.ts
//
// The three things a receiver must get right:
//   1. Verify the RAW body bytes, before any JSON parsing: re-serialising the
//      parsed JSON changes the bytes and the signature no longer matches.
//   2. Let the library check the timestamp too (it refuses anything more than
//      five minutes off), which is what stops a captured request being replayed.
//   3. Deduplicate on `webhook-id`: it is the delivery key, the same on every
//      retry and redrive of one event to one subscription, so a redelivered
//      event is recognised and acknowledged without being applied twice.
// During a secret rotation hookledger signs with the old and the new secret
// (several signatures in one header); the library accepts either.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook, WebhookVerificationError } from "standardwebhooks";

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error("Set WEBHOOK_SECRET to the subscription's whsec_… secret (answered when the subscription is created or rotated).");
  process.exit(2);
}
const webhook = new Webhook(secret);
// A real receiver keeps these in its database, written in the same transaction as the effect.
const seen = new Set<string>();

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : (v ?? "")]));
    let event: { id: string; type: string; timestamp: string; data: Record<string, unknown> };
    try {
      event = webhook.verify(body, headers) as typeof event;
    } catch (err) {
      const why = err instanceof WebhookVerificationError ? err.message : String(err);
      console.log(`rejected ${headers["webhook-id"] || "(no webhook-id)"}: ${why}`);
      res.writeHead(400, { "content-type": "text/plain" }).end("invalid signature\n");
      return;
    }
    const id = headers["webhook-id"];
    if (seen.has(id)) {
      console.log(`duplicate ${id} (${event.id}): acknowledged, not applied again`);
    } else {
      seen.add(id);
      console.log(`verified ${id} event ${event.id} type ${event.type}`);
    }
    // Any 2xx tells hookledger the delivery is done; answer quickly and do slow work afterwards.
    res.writeHead(204).end();
  });
});

server.listen(Number(process.env.PORT ?? 8080), process.env.HOST ?? "127.0.0.1", () => {
  console.log(`LISTENING ${(server.address() as AddressInfo).port}`);
});
for (const sig of ["SIGINT", "SIGTERM"] as const) process.on(sig, () => server.close(() => process.exit(0)));

// 1. The ceiling: raw undici Pool POSTs per second to the same receiver the
// worker posts to, with the same 1 KB body and Standard Webhooks-sized headers;
// no database, no signing. Everything else is held against this.
import { Pool } from "undici";
import type { Receiver } from "../lib/proc";
import { round } from "../lib/stats";

export async function runCeiling(receiver: Receiver, opts: { requests: number; concurrency: number; connections: number }) {
  const origin = `http://127.0.0.1:${receiver.port}`;
  const pool = new Pool(origin, { connections: opts.connections, pipelining: 1, keepAliveTimeout: 30_000 });
  const body = Buffer.alloc(1024, "x");
  const headers = {
    "content-type": "application/json",
    "user-agent": "hookledger/0.1.0",
    "webhook-id": "a".repeat(64),
    "idempotency-key": "a".repeat(64),
    "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
    "webhook-signature": `v1,${"b".repeat(44)}`,
  };
  const once = async () => {
    const r = await pool.request({ path: "/ok/ceiling", method: "POST", headers, body });
    await r.body.dump();
    if (r.statusCode !== 204) throw new Error(`ceiling: receiver answered ${r.statusCode}`);
  };
  const run = async (n: number) => {
    let next = 0;
    const lane = async () => {
      while (next < n) {
        next++;
        await once();
      }
    };
    const t = performance.now();
    await Promise.all(Array.from({ length: Math.min(opts.concurrency, n) }, lane));
    return (performance.now() - t) / 1000;
  };
  await run(Math.min(2_000, opts.requests)); // warm-up: connections, JIT
  const seconds = await run(opts.requests);
  await pool.close();
  return { requests: opts.requests, concurrency: opts.concurrency, connections: opts.connections, seconds: round(seconds, 2), perSecond: round(opts.requests / seconds) };
}

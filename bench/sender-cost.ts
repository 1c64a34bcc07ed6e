// What the worker's send path costs beyond undici's own: CPU per request of
// Sender.send (URL, signature, timer, the answer read and reported) against a
// bare agent.dispatch of the same 1 KB POST with a do-nothing handler, both to
// the bench receiver in its own process. Blocks of 4,000 requests (200 at a
// time) alternate between the two, in swapped order every other round; the
// medians and the median of the paired ratios are printed (BENCHMARKS.md F1).
//   node bin/run-ts.mjs bench/sender-cost.ts [rounds]
import { randomBytes } from "node:crypto";
import { Agent, type Dispatcher } from "undici";
process.env.HOOKLEDGER_SECRET_KEY ??= randomBytes(32).toString("base64");
const { startReceiver, killAll } = await import("./lib/proc");
const { Sender } = await import("../lib/net/sender");
const { generateSecret } = await import("../lib/subscriptions/secrets");
const { medianBy } = await import("./lib/stats");
const rc = await startReceiver();
const origin = `http://127.0.0.1:${rc.port}`;
const body = Buffer.alloc(1024, "x");
const secret = generateSecret();
const headers = {
  "content-type": "application/json",
  "user-agent": "hookledger/0.1.0",
  "webhook-id": "a".repeat(64),
  "idempotency-key": "a".repeat(64),
  "webhook-timestamp": "1700000000",
  "webhook-signature": `v1,${"b".repeat(44)}`,
};
const agent = new Agent({ connections: 50, pipelining: 1 });
const sender = new Sender({ allowPrivate: true, connectionsPerOrigin: 50 });
const url = (i: number) => `${origin}/ok/sub_${String(i % 20).padStart(2, "0")}`;
const bare = (resolve: () => void): Dispatcher.DispatchHandler => ({
  onRequestStart() {},
  onResponseStart() {},
  onResponseData() {},
  onResponseEnd: resolve,
  onResponseError: resolve,
});
const paths: Record<string, (i: number) => Promise<unknown>> = {
  trivial: () => new Promise<void>((resolve) => agent.dispatch({ origin, path: "/ok/x", method: "POST", headers, body }, bare(resolve))),
  "Sender.send": (i) => sender.send({ url: url(i), deliveryKey: "a".repeat(64), body, secrets: [secret] }),
};
async function block(fn: (i: number) => Promise<unknown>, n: number) {
  let next = 0;
  const c0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: 200 }, async () => {
      while (next < n) await fn(next++);
    }),
  );
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / n;
}
const names = Object.keys(paths);
for (const k of names) await block(paths[k], 3000);
const res: Record<string, number[]> = Object.fromEntries(names.map((k) => [k, []]));
for (let r = 0; r < Number(process.argv[2] ?? 12); r++) for (const k of r % 2 ? [...names].reverse() : names) res[k].push(await block(paths[k], 4000));
const med = (a: number[]) => medianBy(a, (x) => x);
for (const k of names)
  console.log(
    `${k.padEnd(12)} median ${med(res[k]).toFixed(1)} µs  ratio to trivial ${med(res[k].map((v, i) => v / res.trivial[i])).toFixed(2)}  all ${res[k].map((v) => v.toFixed(0)).join(" ")}`,
  );
await agent.close();
await sender.close();
await rc.child.stop(2000);
killAll();
process.exit(0);

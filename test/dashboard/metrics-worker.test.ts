// The worker's own metrics endpoint (worker/metrics-server.ts): the per-process
// series the worker records, served in Prometheus text format.
import { afterAll, describe, expect, it } from "vitest";
import http from "node:http";
import net from "node:net";
import { attemptDuration, attemptsTotal, claimBatchSize, schedulingLateness, workerHeartbeat } from "../../lib/metrics/worker";
import { parseMetricsPort, startMetricsServer, type MetricsServer } from "../../worker/metrics-server";
import { parseProm, sample } from "../helpers/prom";

const quiet = { info: () => {}, warn: () => {} };
const started: MetricsServer[] = [];
afterAll(async () => {
  for (const s of started) await s.stop();
});

const canListen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = net.createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });

/** A port p in [from, to) with p and p + 1 both free to listen on. */
async function freePortPair(from: number, to: number): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const p = from + Math.floor(Math.random() * (to - from - 1));
    if ((await canListen(p)) && (await canListen(p + 1))) return p;
  }
  throw new Error(`no two consecutive free ports in ${from}-${to}`);
}

async function start(opts: Parameters<typeof startMetricsServer>[0]) {
  const s = await startMetricsServer({ host: "127.0.0.1", log: quiet, ...opts });
  started.push(s);
  return s;
}

describe("worker metrics server", () => {
  it("serves the worker's counters and histograms with exactly the recorded values", async () => {
    const s = await start({ port: 0 });
    expect(s.port).toBeGreaterThan(0);
    attemptsTotal.inc({ subscription: "sub_a", outcome: "delivered", error_class: "none" }, 7);
    attemptsTotal.inc({ subscription: "sub_a", outcome: "dead_letter", error_class: "http_4xx" }, 2);
    attemptsTotal.inc({ subscription: "sub_b", outcome: "retry", error_class: "timeout" }, 3);
    attemptDuration.observe({ outcome: "delivered" }, 0.02);
    attemptDuration.observe({ outcome: "delivered" }, 0.3);
    schedulingLateness.observe(0.5);
    schedulingLateness.observe(90);
    claimBatchSize.observe(100);
    claimBatchSize.observe(0);
    workerHeartbeat.set(1_800_000_000);

    const res = await fetch(s.url!);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/plain/);
    const m = parseProm(await res.text());
    expect(sample(m, "hookledger_attempts_total", { subscription: "sub_a", outcome: "delivered", error_class: "none" })).toBe(7);
    expect(sample(m, "hookledger_attempts_total", { subscription: "sub_a", outcome: "dead_letter", error_class: "http_4xx" })).toBe(2);
    expect(sample(m, "hookledger_attempts_total", { subscription: "sub_b", outcome: "retry", error_class: "timeout" })).toBe(3);
    expect(sample(m, "hookledger_attempt_duration_seconds_count", { outcome: "delivered" })).toBe(2);
    expect(sample(m, "hookledger_attempt_duration_seconds_bucket", { outcome: "delivered", le: "0.025" })).toBe(1);
    expect(sample(m, "hookledger_scheduling_lateness_seconds_bucket", { le: "60" })).toBe(1);
    expect(sample(m, "hookledger_scheduling_lateness_seconds_bucket", { le: "300" })).toBe(2);
    expect(sample(m, "hookledger_scheduling_lateness_seconds_sum", {})).toBe(90.5);
    expect(sample(m, "hookledger_claim_batch_size_count", {})).toBe(2);
    expect(sample(m, "hookledger_claim_batch_size_sum", {})).toBe(100);
    expect(sample(m, "hookledger_worker_heartbeat_timestamp_seconds", {})).toBe(1_800_000_000);
    expect(m.some((x) => x.name === "process_cpu_user_seconds_total")).toBe(true);

    expect((await fetch(s.url!.replace("/metrics", "/other"))).status).toBe(404);
  });

  it("workers sharing one HOOKLEDGER_METRICS_PORT take consecutive ports", async () => {
    // Below the kernel's ephemeral range (32768+ here), so no outgoing connection of
    // another test file can take the port between the probe and the listen (CI did).
    const base = await freePortPair(20_000, 30_000);
    const a = await start({ port: base });
    const b = await start({ port: base });
    expect(a.port).toBe(base);
    expect(b.port).toBe(base + 1);
    expect((await fetch(b.url!)).status).toBe(200);
  });

  it("is off without a port, and refuses a malformed one with a message naming the variable", async () => {
    const off = await start({ port: null });
    expect(off.port).toBeNull();
    expect(parseMetricsPort(undefined)).toBeNull();
    expect(parseMetricsPort("")).toBeNull();
    expect(parseMetricsPort("0")).toBe(0);
    expect(parseMetricsPort("9464")).toBe(9464);
    expect(() => parseMetricsPort("metrics")).toThrow(/HOOKLEDGER_METRICS_PORT must be a port number/);
  });

  it("requires the bearer token when one is set", async () => {
    const s = await start({ port: 0, token: "w-token" });
    expect((await fetch(s.url!)).status).toBe(401);
    expect((await fetch(s.url!, { headers: { authorization: "Bearer nope" } })).status).toBe(401);
    expect((await fetch(s.url!, { headers: { authorization: "Bearer w-token" } })).status).toBe(200);
  });

  it("listening beyond loopback without a token: every scrape refused, unless HOOKLEDGER_METRICS_PUBLIC=1 opts out", async () => {
    delete process.env.HOOKLEDGER_METRICS_TOKEN;
    const open = await start({ port: 0, host: "0.0.0.0" });
    const r = await fetch(open.url!);
    expect(r.status).toBe(401);
    const text = await r.text();
    expect(text).toMatch(/HOOKLEDGER_METRICS_TOKEN/);
    expect(text).not.toMatch(/hookledger_attempts_total/);
    process.env.HOOKLEDGER_METRICS_PUBLIC = "1";
    try {
      expect((await fetch(open.url!)).status).toBe(200);
    } finally {
      delete process.env.HOOKLEDGER_METRICS_PUBLIC;
    }
    // Loopback (the other tests here) needs no token.
    expect((await fetch((await start({ port: 0, host: "127.0.0.1" })).url!)).status).toBe(200);
  });
});

describe("worker metrics server and DNS rebinding", () => {
  const get = (url: string, hostHeader: string, authorization?: string) =>
    new Promise<number>((resolve, reject) => {
      const req = http.request(url, { headers: { host: hostHeader, ...(authorization ? { authorization } : {}) } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on("error", reject);
      req.end();
    });

  it("open on loopback without a token, it answers localhost and IP addresses only: a rebound name gets 421", async () => {
    const s = await start({ port: 0, token: "" });
    expect(await get(s.url!, `127.0.0.1:${s.port}`)).toBe(200);
    expect(await get(s.url!, `localhost:${s.port}`)).toBe(200);
    expect(await get(s.url!, `rebind.evil.example:${s.port}`)).toBe(421);
  });

  it("with a token, any name that brings the token is served (a scraper may use a service name)", async () => {
    const s = await start({ port: 0, token: "metrics-secret" });
    expect(await get(s.url!, "worker-1.internal", "Bearer metrics-secret")).toBe(200);
    expect(await get(s.url!, "worker-1.internal")).toBe(401);
  });
});

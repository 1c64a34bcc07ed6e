// The SSRF guard: refused at connect time (so DNS rebinding cannot slip past)
// and early, with a clear 400, when a subscription is saved. No traffic leaves
// the machine: names resolve through an injected lookup and only 127.0.0.1 is dialled.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import * as subs from "../../app/api/v1/subscriptions/route";
import { blockedReason, checkHost, type LookupFunction } from "../../lib/net/ssrf";
import { validateTargetUrl } from "../../lib/net/target";
import { AppError } from "../../lib/errors";
import { Sender } from "../../lib/net/sender";
import { createSub, seedEvents, settled, startReceiver, worker, type Receiver } from "../helpers/worker-helpers";

/** Resolves every name to the given address, like a hostile or rebinding DNS server. */
const resolvesTo =
  (address: string): LookupFunction =>
  (_host, options, cb) =>
    options.all ? cb(null, [{ address, family: address.includes(":") ? 6 : 4 }]) : cb(null, address, address.includes(":") ? 6 : 4);

let db: TestDb;
let r: Receiver;
beforeAll(async () => {
  db = await createTestDatabase();
  r = await startReceiver();
});
afterAll(async () => {
  await r?.close();
  await db?.close();
});

describe("blockedReason", () => {
  it("refuses loopback, private, CGNAT, link-local, unique-local, mapped, unspecified, multicast", () => {
    for (const ip of [
      "127.0.0.1",
      "127.9.9.9",
      "10.0.0.1",
      "172.16.0.1",
      "172.31.255.255",
      "192.168.1.1",
      "100.64.0.1",
      "169.254.169.254",
      "::1",
      "fc00::1",
      "fd12:3456::1",
      "fe80::1",
      "::ffff:127.0.0.1",
      "::ffff:10.0.0.1",
      "0.0.0.0",
      "::",
      "224.0.0.1",
      "ff02::1",
      "255.255.255.255",
    ])
      expect(blockedReason(ip), ip).not.toBeNull();
    expect(blockedReason("169.254.169.254")).toMatch(/metadata/);
  });
  it("allows global unicast", () => {
    for (const ip of ["8.8.8.8", "93.184.216.34", "172.32.0.1", "2606:4700::1111", "::ffff:8.8.8.8"]) expect(blockedReason(ip), ip).toBeNull();
  });
});

describe("IPv4-compatible addresses and the operator's deny-list", () => {
  it("refuses IPv4-compatible ::/96 addresses (::127.0.0.1, ::a9fe:a9fe)", () => {
    for (const ip of ["::127.0.0.1", "::7f00:1", "::10.0.0.1", "::a9fe:a9fe", "::8.8.8.8"]) expect(blockedReason(ip), ip).toMatch(/IPv4-compatible/);
  });

  it("HOOKLEDGER_DENY_TARGETS refuses its CIDRs, even public ones and even with private targets allowed", async () => {
    const prev = process.env.HOOKLEDGER_DENY_TARGETS;
    process.env.HOOKLEDGER_DENY_TARGETS = "168.63.129.16/32, 203.0.113.0/24,2001:db9::/32";
    try {
      expect(blockedReason("168.63.129.16")).toMatch(/deny-list/);
      expect(blockedReason("203.0.113.77", { allowPrivate: true })).toMatch(/deny-list/);
      expect(blockedReason("::ffff:168.63.129.16")).toMatch(/deny-list/);
      expect(blockedReason("2001:db9::5")).toMatch(/deny-list/);
      expect(blockedReason("168.63.129.17")).toBeNull();
      expect(await checkHost("wire.example", { allowPrivate: true, lookup: resolvesTo("168.63.129.16") })).toMatch(/Refused target wire\.example/);
      expect(await checkHost("wire.example", { allowPrivate: true, lookup: resolvesTo("168.63.129.16") })).not.toMatch(/168\.63/);
      const open = new Sender({ allowPrivate: true, lookup: resolvesTo("168.63.129.16") });
      const res = await open.send({ url: "http://wire.example/hooks", deliveryKey: "kd", body: Buffer.from("{}"), secrets: [], timeoutMs: 2000 });
      await open.close();
      expect(res).toMatchObject({ outcome: "error", errorClass: "target_blocked" });
      process.env.HOOKLEDGER_DENY_TARGETS = "168.63.129.16/33";
      expect(() => blockedReason("8.8.8.8")).toThrow(/HOOKLEDGER_DENY_TARGETS must be comma-separated CIDRs/);
    } finally {
      if (prev === undefined) delete process.env.HOOKLEDGER_DENY_TARGETS;
      else process.env.HOOKLEDGER_DENY_TARGETS = prev;
    }
  });
});

describe("the sender refuses blocked targets at connect time", () => {
  const sender = new Sender({ allowPrivate: false, lookup: resolvesTo("127.0.0.1") });
  afterAll(() => sender.close());
  const send = (url: string) => sender.send({ url, deliveryKey: "k", body: Buffer.from("{}"), secrets: [], timeoutMs: 2000 });

  it.each([
    ["127.0.0.1", () => `http://127.0.0.1:${r.port}/hooks`, /loopback/],
    ["10.0.0.1", () => "http://10.0.0.1/hooks", /private/],
    ["[::1]", () => `http://[::1]:${r.port}/hooks`, /loopback/],
    ["169.254.169.254", () => "http://169.254.169.254/latest/meta-data/", /link-local/],
    ["a name resolving to 127.0.0.1", () => `http://grades.lincoln.example.test:${r.port}/hooks`, /resolves to an address webhooks may not be sent to/],
    ["https to a name resolving to 127.0.0.1", () => `https://grades.lincoln.example.test:${r.port}/hooks`, /resolves to an address webhooks may not be sent to/],
  ])("%s → target_blocked", async (_name, url, why) => {
    const res = await send(url());
    expect(res).toMatchObject({ outcome: "error", errorClass: "target_blocked", ambiguous: false, statusCode: null });
    expect(res.errorMessage).toMatch(why);
    expect(res.errorMessage).toMatch(/HOOKLEDGER_ALLOW_PRIVATE_TARGETS=1/);
    expect(r.received).toHaveLength(0);
  });

  it("HOOKLEDGER_ALLOW_PRIVATE_TARGETS lifts it, and the checked lookup is what is dialled", async () => {
    const open = new Sender({ allowPrivate: true, lookup: resolvesTo("127.0.0.1") });
    const res = await open.send({ url: `http://district.example.test:${r.port}/hooks`, deliveryKey: "k2", body: Buffer.from("{}"), secrets: [] });
    await open.close();
    expect(res).toMatchObject({ outcome: "response", statusCode: 204 });
    expect(r.count("k2")).toBe(1);
  });
});

describe("subscription create/update refuse private targets with a 400", () => {
  it("validateTargetUrl names the reason; a name that does not resolve now is left to the connect-time guard", async () => {
    for (const url of ["http://127.0.0.1/x", "http://10.0.0.1/", "http://[::1]/", "http://169.254.169.254/latest/meta-data/"]) {
      const err = await validateTargetUrl(url, { allowPrivate: false }).catch((e) => e);
      expect(err, url).toBeInstanceOf(AppError);
      expect(err.code).toBe("validation_failed");
      expect(err.message).toMatch(/Refused target/);
    }
    const viaDns = await validateTargetUrl("http://sis.lincoln.example/", { allowPrivate: false, lookup: resolvesTo("192.168.0.10") }).catch((e) => e);
    expect(viaDns.message).toMatch(/resolves to an address webhooks may not be sent to/);
    // What an internal name resolves to is not told to whoever saves the subscription.
    expect(viaDns.message).not.toMatch(/192\.168|RFC 1918|a private/);
    await expect(validateTargetUrl("http://127.0.0.1/x", { allowPrivate: true })).resolves.toBeInstanceOf(URL);
    await expect(validateTargetUrl("https://sis.lincoln.example/", { allowPrivate: false, lookup: resolvesTo("8.8.8.8") })).resolves.toBeInstanceOf(URL);
    expect(await checkHost("no-such-host.invalid", { allowPrivate: false })).toBeNull();
  });

  it("POST /api/v1/subscriptions answers 400 for a loopback target unless HOOKLEDGER_ALLOW_PRIVATE_TARGETS=1", async () => {
    const prev = process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS;
    const admin = await tokenFor(db.prisma, "admin");
    try {
      delete process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS;
      const refused = await call(subs.POST, { token: admin, body: { name: "local", url: "http://127.0.0.1:9/hooks", eventTypes: ["assignment.graded"] } });
      expect(refused.status).toBe(400);
      expect(refused.json.error.message).toMatch(/loopback/);
      process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS = "1";
      const ok = await call(subs.POST, { token: admin, body: { name: "local", url: "http://127.0.0.1:9/hooks", eventTypes: ["assignment.graded"] } });
      expect(ok.status, ok.text).toBe(201);
    } finally {
      if (prev === undefined) delete process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS;
      else process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS = prev;
    }
  });
});

describe("the worker dead-letters a blocked target", () => {
  it("a subscription saved while allowed, then refused when sent: target_blocked, nothing received", async () => {
    const w = worker(db.url, { allowPrivateTargets: false, lookup: resolvesTo("127.0.0.1") });
    try {
      await createSub(db.pool, { id: "sub_rebind", url: `http://rebind.example.test:${r.port}/hooks` });
      await createSub(db.pool, { id: "sub_meta", url: "http://169.254.169.254/latest/meta-data/" });
      await seedEvents(db.pool, "evt_ssrf_", 1, ["sub_rebind", "sub_meta"]);
      for (const sub of ["sub_rebind", "sub_meta"]) {
        const d = await settled(db.pool, sub, "evt_ssrf_1");
        expect(d).toMatchObject({ state: "dead_letter", dead_letter_reason: "target_blocked", last_error_class: "target_blocked", attempt_count: 1 });
        expect(d.last_error_message).toMatch(/Refused target/);
      }
      expect(r.received.filter((x) => x.id !== "k2")).toHaveLength(0);
    } finally {
      await w.stop();
    }
  });
});

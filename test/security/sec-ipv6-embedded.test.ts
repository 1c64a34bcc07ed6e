// IPv6 addresses that carry an IPv4 address and reach it: IPv4-compatible
// (::/96), IPv4-mapped (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96),
// NAT64 (64:ff9b::/96 and the local-use 64:ff9b:1::/48), 6to4 (2002::/16)
// and Teredo (2001::/32, the client's IPv4 inverted in the last 32 bits).
// With private targets allowed only the operator's deny-list stands between
// a subscription and an address, so it must see through every one of these
// forms, when the subscription is saved and when the worker connects, as
// the private-address check must when private targets are refused. Names
// resolve through an injected lookup; nothing leaves the machine.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import * as subs from "../../app/api/v1/subscriptions/route";
import { blockedReason, type LookupFunction } from "../../lib/net/ssrf";
import { validateTargetUrl } from "../../lib/net/target";
import { Sender } from "../../lib/net/sender";

const resolvesTo =
  (address: string): LookupFunction =>
  (_host, options, cb) =>
    options.all ? cb(null, [{ address, family: address.includes(":") ? 6 : 4 }]) : cb(null, address, address.includes(":") ? 6 : 4);

/** Teredo's client field: the IPv4 address with every bit inverted (RFC 4380 section 4). */
function teredo(v4: string): string {
  const n = (v4.split(".").reduce((a, o) => (a << 8) | Number(o), 0) ^ 0xffffffff) >>> 0;
  // Server 65.54.227.120 (4136:e378), flags 8000, port 63bf: as a real Teredo address would have them.
  return `2001:0:4136:e378:8000:63bf:${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
}

/** Every form of an IPv6 address that reaches `v4`. */
function forms(v4: string): string[] {
  const [a, b, c, d] = v4.split(".").map(Number);
  const hi = ((a << 8) | b).toString(16);
  const lo = ((c << 8) | d).toString(16);
  return [
    `::${v4}`,
    `::${hi}:${lo}`,
    `::ffff:${v4}`,
    `::ffff:0:${hi}:${lo}`,
    `64:ff9b::${hi}:${lo}`,
    `64:ff9b::${v4}`,
    `64:ff9b:1::${hi}:${lo}`,
    `2002:${hi}:${lo}::`,
    `2002:${hi}:${lo}:1::5`,
    teredo(v4),
  ];
}

let db: TestDb;
let admin: string;
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  db = await createTestDatabase();
  admin = await tokenFor(db.prisma, "admin");
  for (const k of ["HOOKLEDGER_DENY_TARGETS", "HOOKLEDGER_ALLOW_PRIVATE_TARGETS"]) saved[k] = process.env[k];
  process.env.HOOKLEDGER_DENY_TARGETS = "127.0.0.2/32,203.0.113.0/24";
  process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS = "1";
});
afterAll(async () => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await db?.close();
});

describe("the deny-list sees the IPv4 address inside an IPv6 one (private targets allowed)", () => {
  it("every form of a denied address is refused; the same forms of an address not denied are not", () => {
    for (const ip of [...forms("127.0.0.2"), ...forms("203.0.113.9")]) expect(blockedReason(ip, { allowPrivate: true }), ip).toMatch(/deny-list/);
    for (const ip of forms("127.0.0.3")) expect(blockedReason(ip, { allowPrivate: true }), ip).toBeNull();
  });

  it("saving: the API answers 400 for each form, as an IP literal or as a name resolving to it, and writes nothing", async () => {
    for (const ip of forms("127.0.0.2")) {
      const r = await call(subs.POST, { token: admin, body: { name: "embedded", url: `http://[${ip}]:8080/hooks`, eventTypes: ["assignment.graded"] } });
      expect(r.status, `${ip}: ${r.text}`).toBe(400);
      expect(r.json.error.message, ip).toMatch(/deny-list/);
      const viaDns = await validateTargetUrl("http://gateway.lincoln.example.test/hooks", { allowPrivate: true, lookup: resolvesTo(ip) }).catch((e) => e);
      expect(viaDns, ip).toBeInstanceOf(Error);
      expect(viaDns.message, ip).toMatch(/resolves to an address webhooks may not be sent to/);
    }
    expect((await db.pool.query("SELECT count(*)::int AS n FROM subscriptions WHERE name = 'embedded'")).rows[0].n).toBe(0);
  });

  it("connecting: the sender refuses each form as target_blocked, typed or resolved", async () => {
    const sender = new Sender({ allowPrivate: true });
    try {
      for (const ip of forms("127.0.0.2")) {
        const res = await sender.send({ url: `http://[${ip}]:8080/hooks`, deliveryKey: "k", body: Buffer.from("{}"), secrets: [], timeoutMs: 2000 });
        expect(res, ip).toMatchObject({ outcome: "error", errorClass: "target_blocked", ambiguous: false });
        const named = new Sender({ allowPrivate: true, lookup: resolvesTo(ip) });
        const viaDns = await named.send({
          url: "http://gateway.lincoln.example.test:8080/hooks",
          deliveryKey: "k",
          body: Buffer.from("{}"),
          secrets: [],
          timeoutMs: 2000,
        });
        await named.close();
        expect(viaDns, ip).toMatchObject({ outcome: "error", errorClass: "target_blocked", ambiguous: false });
      }
    } finally {
      await sender.close();
    }
  });
});

describe("the private-address check names what an IPv6 address carries (private targets refused)", () => {
  it.each([
    ["10.0.0.1", /a private \(RFC 1918\) address/],
    ["169.254.169.254", /cloud metadata/],
    ["127.0.0.1", /loopback/],
  ])("each form of %s is refused for what it embeds", (v4, why) => {
    for (const ip of forms(v4)) {
      const reason = blockedReason(ip, { allowPrivate: false });
      expect(reason, ip).toMatch(why);
      expect(reason, ip).toContain(v4);
    }
  });

  it("public IPv4 carried in IPv6: the mapped form is allowed as before; NAT64, 6to4 and Teredo stay refused as special-purpose ranges", () => {
    expect(blockedReason("::ffff:8.8.8.8", { allowPrivate: false })).toBeNull();
    for (const ip of ["64:ff9b::808:808", "2002:808:808::1", teredo("8.8.8.8")]) expect(blockedReason(ip, { allowPrivate: false }), ip).not.toBeNull();
    expect(blockedReason("2606:4700::1111", { allowPrivate: false })).toBeNull();
  });
});

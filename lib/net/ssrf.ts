// The SSRF guard. Webhook targets are URLs that customers type; without this a
// subscription to http://169.254.169.254/ would make the worker read cloud
// metadata. The check runs at connect time, inside the socket's own DNS lookup,
// so a name that resolved to a public address when the subscription was saved
// and to a private one now (DNS rebinding) is still refused.
import "server-only";
import dns from "node:dns";
import net from "node:net";
import ipaddr from "ipaddr.js";

/** ipaddr.js range names and why each is refused. Only global unicast is allowed. */
const RANGE_WHY: Record<string, string> = {
  loopback: "a loopback address",
  private: "a private (RFC 1918) address",
  carrierGradeNat: "a carrier-grade NAT (100.64/10) address",
  linkLocal: "a link-local address (this includes cloud metadata at 169.254.169.254)",
  uniqueLocal: "a unique-local IPv6 address (fc00::/7)",
  unspecified: "the unspecified address",
  multicast: "a multicast address",
  broadcast: "the broadcast address",
  reserved: "a reserved address",
};

export const ALLOW_PRIVATE_ENV = "HOOKLEDGER_ALLOW_PRIVATE_TARGETS";

export function privateTargetsAllowed(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[ALLOW_PRIVATE_ENV] === "1";
}

export const DENY_TARGETS_ENV = "HOOKLEDGER_DENY_TARGETS";

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];
const denyCache: { raw?: string; list: Cidr[] } = { list: [] };

/**
 * The operator's deny-list: HOOKLEDGER_DENY_TARGETS, comma-separated CIDRs or
 * addresses (e.g. the Azure wire server 168.63.129.16, or a cloud's public
 * metadata range). It applies even with HOOKLEDGER_ALLOW_PRIVATE_TARGETS=1. A
 * malformed entry throws, naming it, so a typo cannot silently allow a range.
 */
export function denyTargets(raw = process.env[DENY_TARGETS_ENV] ?? ""): Cidr[] {
  if (denyCache.raw === raw) return denyCache.list;
  const list: Cidr[] = [];
  for (const entry of raw
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean)) {
    try {
      list.push(
        entry.includes("/")
          ? ipaddr.parseCIDR(entry)
          : (() => {
              const a = ipaddr.parse(entry);
              return [a, a.kind() === "ipv4" ? 32 : 128] as Cidr;
            })(),
      );
    } catch {
      throw new Error(`${DENY_TARGETS_ENV} must be comma-separated CIDRs or IP addresses such as 168.63.129.16/32,fd00:ec2::/32 (got "${entry}").`);
    }
  }
  denyCache.raw = raw;
  denyCache.list = list;
  return list;
}

function denied(addr: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  return denyTargets().some(([net, bits]) => addr.kind() === net.kind() && addr.match([net, bits] as never));
}

type EmbeddingKind = "compatible" | "mapped" | "translated" | "nat64" | "6to4" | "teredo";

const v4Of = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);

/**
 * The IPv4 address an IPv6 address carries in one of the forms that deliver
 * to it, and the form's name; null for any other address. Each is a way to
 * reach an IPv4 host by an IPv6 literal or AAAA record, so the deny-list and
 * the private ranges must be applied to what it carries (a NAT64 gateway, a
 * 6to4 or Teredo relay, or a dual stack forwards to it).
 */
function embeddedIPv4(v6: ipaddr.IPv6): { v4: ipaddr.IPv4; kind: EmbeddingKind; form: string } | null {
  const p = v6.parts;
  const zero = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  // :: and ::1 are their own ranges (unspecified, loopback), not IPv4 0.0.0.0 and 0.0.0.1.
  if (zero(0, 6) && (p[6] !== 0 || p[7] > 1)) return { v4: v4Of(p[6], p[7]), kind: "compatible", form: "an IPv4-compatible IPv6 address (::/96)" };
  if (zero(0, 5) && p[5] === 0xffff) return { v4: v4Of(p[6], p[7]), kind: "mapped", form: "an IPv4-mapped IPv6 address (::ffff:0:0/96)" };
  if (zero(0, 4) && p[4] === 0xffff && p[5] === 0) return { v4: v4Of(p[6], p[7]), kind: "translated", form: "an IPv4-translated IPv6 address (::ffff:0:0:0/96)" };
  if (p[0] === 0x64 && p[1] === 0xff9b && zero(2, 6)) return { v4: v4Of(p[6], p[7]), kind: "nat64", form: "a NAT64 address (64:ff9b::/96)" };
  // RFC 8215's local-use NAT64 prefix: read as the usual /96 layout, the IPv4 address in the last 32 bits.
  if (p[0] === 0x64 && p[1] === 0xff9b && p[2] === 1) return { v4: v4Of(p[6], p[7]), kind: "nat64", form: "a local-use NAT64 address (64:ff9b:1::/48)" };
  if (p[0] === 0x2002) return { v4: v4Of(p[1], p[2]), kind: "6to4", form: "a 6to4 address (2002::/16)" };
  // RFC 4380: the client's IPv4 address with every bit inverted; the relay delivers to it.
  if (p[0] === 0x2001 && p[1] === 0) return { v4: v4Of(p[6] ^ 0xffff, p[7] ^ 0xffff), kind: "teredo", form: "a Teredo address (2001::/32)" };
  return null;
}

/** Why an IP address may not be a webhook target, or null if it may. */
export function blockedReason(address: string, opts: { allowPrivate?: boolean } = {}): string | null {
  const raw = address.replace(/^\[|\]$/g, "");
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // ipaddr.js reads any "::a.b.c.d" as ::ffff:a.b.c.d; the WHATWG serialiser
    // (what the sender's URL parsing produces) keeps ::7f00:1 apart from ::ffff:7f00:1.
    parsed = ipaddr.parse(net.isIPv6(raw) ? new URL(`http://[${raw}]/`).hostname.slice(1, -1) : raw);
  } catch {
    return `${raw} is not an IP address`;
  }
  if (parsed.kind() === "ipv6") {
    const embedded = embeddedIPv4(parsed as ipaddr.IPv6);
    if (embedded) {
      const v4 = embedded.v4.toString();
      const inner = blockedReason(v4, opts);
      if (inner) return `${raw} is ${embedded.form} carrying ${v4}: ${inner}`;
      // Deprecated by RFC 4291, and some stacks still route it to the IPv4 address: refused whatever it carries.
      if (embedded.kind === "compatible" && !opts.allowPrivate) return `${raw} is ${embedded.form}, carrying ${v4}`;
      // A mapped address is how a dual stack dials the IPv4 address itself: what it carries is what is checked.
      if (embedded.kind === "mapped" && !denied(parsed)) return null;
    }
  }
  if (denied(parsed)) return `${raw} is on the operator's deny-list (${DENY_TARGETS_ENV})`;
  if (opts.allowPrivate) return null;
  const range = parsed.range();
  if (range === "unicast") return null;
  return `${raw} is ${RANGE_WHY[range] ?? `in the special-purpose range "${range}"`}`;
}

export class TargetBlockedError extends Error {
  readonly code = "HL_TARGET_BLOCKED";
  constructor(message: string) {
    super(message);
    this.name = "TargetBlockedError";
  }
}

export type LookupAddress = { address: string; family: number };
/** dns.lookup's callback shape (the `lookup` option of net.connect). */
export type LookupFunction = (
  hostname: string,
  options: dns.LookupOptions,
  callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

const HINT = ` Set ${ALLOW_PRIVATE_ENV}=1 to allow private targets (tests, demos, trusted networks).`;

/** Throws TargetBlockedError when an IP literal host is refused. */
export function checkIpLiteral(host: string, allowPrivate = privateTargetsAllowed()): void {
  const h = host.replace(/^\[|\]$/g, "");
  if (!net.isIP(h)) return;
  // The caller typed this address, so saying what kind it is tells them nothing new.
  const why = blockedReason(h, { allowPrivate });
  if (why) throw new TargetBlockedError(`Refused target ${h}: ${why}.${allowPrivate ? "" : HINT}`);
}

/**
 * A `lookup` for net.connect/tls.connect that resolves every address of the
 * name and refuses the connection if any of them is blocked.
 */
export function checkedLookup(opts: { lookup?: LookupFunction; allowPrivate?: boolean } = {}): LookupFunction {
  const base = opts.lookup ?? (dns.lookup as unknown as LookupFunction);
  return (hostname, options, callback) => {
    base(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, "");
      const list = (Array.isArray(addresses) ? addresses : [{ address: addresses, family: net.isIP(addresses) }]) as LookupAddress[];
      const allow = opts.allowPrivate ?? privateTargetsAllowed();
      for (const a of list) {
        let why: string | null;
        try {
          why = blockedReason(a.address, { allowPrivate: allow });
        } catch (err) {
          return callback(err as Error, ""); // a malformed deny-list: refuse, naming the variable
        }
        // The message names neither the address nor its kind: it reaches
        // whoever saved the subscription (a 400, the delivery page), and what
        // an internal name resolves to is the operator's business.
        if (why)
          return callback(
            new TargetBlockedError(
              `Refused target ${hostname}: it resolves to an address webhooks may not be sent to (not a public address, or denied by the operator).${allow ? "" : HINT}`,
            ),
            "",
          );
      }
      if (list.length === 0) return callback(Object.assign(new Error(`${hostname} resolved to no address`), { code: "ENOTFOUND" }), "");
      if (options.all) return callback(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}

/**
 * Resolves a host and says why it is refused, or null if it is allowed or
 * cannot be resolved now (the connect-time guard still applies then).
 */
export async function checkHost(host: string, opts: { lookup?: LookupFunction; allowPrivate?: boolean; timeoutMs?: number } = {}): Promise<string | null> {
  const allow = opts.allowPrivate ?? privateTargetsAllowed();
  try {
    checkIpLiteral(host, allow);
  } catch (err) {
    return (err as Error).message;
  }
  if (net.isIP(host.replace(/^\[|\]$/g, ""))) return null;
  if (allow && denyTargets().length === 0) return null;
  const lookup = checkedLookup({ lookup: opts.lookup, allowPrivate: allow });
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), opts.timeoutMs ?? 3000);
    lookup(host, { all: true }, (err) => {
      clearTimeout(timer);
      resolve(err instanceof TargetBlockedError ? err.message : null);
    });
  });
}

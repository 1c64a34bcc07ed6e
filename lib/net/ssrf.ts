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
    const v6 = parsed as ipaddr.IPv6;
    // ::a.b.c.d (IPv4-compatible, deprecated by RFC 4291; :: and ::1 excepted,
    // which are their own ranges below): refused whatever the IPv4 part, since
    // some stacks still route it to the embedded IPv4 address.
    if (v6.parts.slice(0, 6).every((p) => p === 0) && (v6.parts[6] !== 0 || v6.parts[7] > 1) && !opts.allowPrivate)
      return `${raw} is an IPv4-compatible IPv6 address (::/96)`;
    if (v6.isIPv4MappedAddress()) {
      const inner = blockedReason(v6.toIPv4Address().toString(), opts);
      return inner ? `${raw} is an IPv4-mapped IPv6 address: ${inner}` : null;
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

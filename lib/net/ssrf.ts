// The SSRF guard. Webhook targets are URLs that customers type; without this a
// subscription to http://169.254.169.254/ would make the worker read cloud
// metadata. The check runs at connect time, inside the socket's own DNS lookup,
// so a name that resolved to a public address when the subscription was saved
// and to a private one now (DNS rebinding) is still refused.
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

/** Why an IP address may not be a webhook target, or null if it may. */
export function blockedReason(address: string): string | null {
  const raw = address.replace(/^\[|\]$/g, "");
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(raw);
  } catch {
    return `${raw} is not an IP address`;
  }
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    const inner = blockedReason((parsed as ipaddr.IPv6).toIPv4Address().toString());
    return inner ? `${raw} is an IPv4-mapped IPv6 address: ${inner}` : null;
  }
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
  if (allowPrivate || !net.isIP(h)) return;
  const why = blockedReason(h);
  if (why) throw new TargetBlockedError(`Refused target ${h}: ${why}.${HINT}`);
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
      if (!allow) {
        for (const a of list) {
          const why = blockedReason(a.address);
          if (why) return callback(new TargetBlockedError(`Refused target ${hostname}: it resolves to ${a.address}, ${why.replace(/^\S+ is /, "")}.${HINT}`), "");
        }
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
export async function checkHost(
  host: string,
  opts: { lookup?: LookupFunction; allowPrivate?: boolean; timeoutMs?: number } = {},
): Promise<string | null> {
  const allow = opts.allowPrivate ?? privateTargetsAllowed();
  if (allow) return null;
  try {
    checkIpLiteral(host, false);
  } catch (err) {
    return (err as Error).message;
  }
  if (net.isIP(host.replace(/^\[|\]$/g, ""))) return null;
  const lookup = checkedLookup({ lookup: opts.lookup, allowPrivate: false });
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), opts.timeoutMs ?? 3000);
    lookup(host, { all: true }, (err) => {
      clearTimeout(timer);
      resolve(err instanceof TargetBlockedError ? err.message : null);
    });
  });
}

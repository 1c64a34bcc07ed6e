// Whose request is this: the address the sign-in limit counts. X-Forwarded-For
// and X-Real-IP are whatever the client wrote unless a proxy the operator
// trusts (HOOKLEDGER_TRUSTED_PROXIES) added them, and the dashboard listens on
// every interface by default, so they are read only when the direct peer (the
// socket's address) is such a proxy.
//
// A route handler never sees the socket: server.ts puts its address in
// PEER_HEADER after deleting any copy the client sent, and marks the process
// (trustPeerHeader) so that the header is believed. Without the mark (plain
// `next start`, which would pass a client's copy through) no address is known.
import "server-only";
import type { IncomingMessage } from "node:http";
import net from "node:net";

export const TRUSTED_PROXIES_ENV = "HOOKLEDGER_TRUSTED_PROXIES";
export const PEER_HEADER = "x-hookledger-peer";

// On globalThis, not in this module: server.ts loads its own copy of lib/ through tsx, while the route
// handlers run Next's bundled copy in the same process.
const PEER_MARK = Symbol.for("hookledger.peerHeaderTrusted");

/** server.ts, once at start: from now on PEER_HEADER is the socket's address, set by stampPeer. */
export function trustPeerHeader(): void {
  (globalThis as Record<symbol, unknown>)[PEER_MARK] = true;
}

/** server.ts, first on every request: the client's own PEER_HEADER is dropped, the socket's address put in its place. */
export function stampPeer(req: IncomingMessage): void {
  delete req.headers[PEER_HEADER];
  const peer = req.socket.remoteAddress;
  if (peer) req.headers[PEER_HEADER] = peer;
}

export type TrustedProxies = { has: (address: string) => boolean; size: number };

/** IPv4-mapped IPv6 (a dual-stack socket's view of an IPv4 peer) as plain IPv4; IPv6 in lower case. */
function normalize(address: string): string | null {
  const a = address.trim().toLowerCase();
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(a);
  if (mapped && net.isIPv4(mapped[1])) return mapped[1];
  return net.isIP(a) ? a : null;
}

/**
 * HOOKLEDGER_TRUSTED_PROXIES: addresses and CIDRs separated by commas or
 * spaces (`10.0.0.0/8, 192.168.1.7 ::1/128`); unset or empty trusts none.
 * Throws on anything else, naming the variable and the entry (docs/STYLE.md #12).
 */
export function parseTrustedProxies(raw: string | undefined): TrustedProxies {
  const list = new net.BlockList();
  let size = 0;
  for (const entry of (raw ?? "").split(/[\s,]+/).filter(Boolean)) {
    const m = /^([^/]+)(?:\/(\d{1,3}))?$/.exec(entry);
    const address = m ? normalize(m[1]) : null;
    const family = address ? net.isIP(address) : 0;
    const prefix = m?.[2] === undefined ? (family === 4 ? 32 : 128) : Number(m[2]);
    if (!address || prefix > (family === 4 ? 32 : 128))
      throw new Error(
        `${TRUSTED_PROXIES_ENV}: "${entry}" is not an IP address or CIDR. List the proxies in front of hookledger as addresses or CIDRs separated by commas or spaces (e.g. "127.0.0.1/32, 10.0.0.0/8, ::1"), or unset it to trust none.`,
      );
    list.addSubnet(address, prefix, family === 4 ? "ipv4" : "ipv6");
    size++;
  }
  return {
    size,
    has: (address) => {
      const a = normalize(address);
      return !!a && list.check(a, net.isIPv4(a) ? "ipv4" : "ipv6");
    },
  };
}

let cached: { raw: string | undefined; list: TrustedProxies } | undefined;

/** The operator's trusted proxies, parsed once per value of the variable (lib/auth/startup.ts checks it at start). */
export function trustedProxies(): TrustedProxies {
  const raw = process.env[TRUSTED_PROXIES_ENV];
  if (!cached || cached.raw !== raw) cached = { raw, list: parseTrustedProxies(raw) };
  return cached.list;
}

/** One X-Forwarded-For entry as an address: `1.2.3.4`, `1.2.3.4:5678`, `2001:db8::1`, `[2001:db8::1]:443`. */
function forwardedAddress(entry: string): string | null {
  const e = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(e);
  if (bracketed) return normalize(bracketed[1]);
  const v4port = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(e);
  return normalize(v4port ? v4port[1] : e);
}

/**
 * The client's address for the sign-in limit, or null when it cannot be known
 * (not served by server.ts). The direct peer, unless it is a trusted proxy;
 * then X-Forwarded-For from the right, skipping trusted proxies, to the first
 * address that is not one (what lies left of it is that client's own claim),
 * or X-Real-IP when the proxy sends only that.
 */
export function clientAddress(headers: Pick<Headers, "get">, trusted: TrustedProxies = trustedProxies()): string | null {
  if (!(globalThis as Record<symbol, unknown>)[PEER_MARK]) return null;
  const peer = headers.get(PEER_HEADER);
  let address = peer ? normalize(peer) : null;
  if (!address || !trusted.has(address)) return address;
  const hops = (headers.get("x-forwarded-for") ?? "").split(",").filter((h) => h.trim());
  if (!hops.length) return forwardedAddress(headers.get("x-real-ip") ?? "") ?? address;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = forwardedAddress(hops[i]);
    // An entry that is no address: nothing to its left can be vouched for either.
    if (!hop) return address;
    address = hop;
    if (!trusted.has(address)) return address;
  }
  return address;
}

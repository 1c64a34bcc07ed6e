// The names the dashboard answers to. DNS rebinding: a page on
// rebind.evil.example whose name is then pointed at the dashboard's address is,
// to the browser, the same origin as the dashboard, and can read its answers
// (the sign-in page, /metrics where loopback opens it) and sign in with any
// password it learns; the request's Host is the attacker's name. So pages,
// sign-in, /metrics and /api/health (proxy.ts, lib/auth/signin.ts) answer only
// to a Host the dashboard is known by:
//  - HOOKLEDGER_PUBLIC_URL's host name (the address people open it at);
//  - the listen address's name (HOOKLEDGER_HOST / server.ts -H), if it is one;
//  - localhost, and any IP address: no DNS answer can move a name that is not
//    looked up, so neither can be rebound.
// The port is not compared: an attacker's name fails whatever its port, and a
// proxy may or may not pass the port on. A forwarded Host (X-Forwarded-Host)
// must be one of these too: a rebound page can set that header itself.
import "server-only";
import net from "node:net";

export const PUBLIC_URL_ENV = "HOOKLEDGER_PUBLIC_URL";

/**
 * HOOKLEDGER_PUBLIC_URL as a URL, or null when unset. Throws unless it is an
 * http(s) origin (no path, query or credentials), naming the variable.
 */
export function parsePublicUrl(raw: string | undefined): URL | null {
  const t = raw?.trim();
  if (!t) return null;
  let url: URL | null = null;
  try {
    url = new URL(t);
  } catch {
    url = null;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:") || !url.hostname || url.username || url.password || url.pathname !== "/" || url.search || url.hash)
    throw new Error(
      `${PUBLIC_URL_ENV} must be the address people open the dashboard at, an http(s) origin such as https://hookledger.example.com (got "${raw}"); unset it to answer only to localhost, IP addresses and the listen address.`,
    );
  return url;
}

let cached: { raw: string | undefined; url: URL | null } | undefined;

/** The operator's HOOKLEDGER_PUBLIC_URL, parsed once per value (server.ts and lib/auth/startup.ts check it at start). */
export function publicUrl(): URL | null {
  const raw = process.env[PUBLIC_URL_ENV];
  if (!cached || cached.raw !== raw) cached = { raw, url: parsePublicUrl(raw) };
  return cached.url;
}

// server.ts's -H, for a dashboard started without HOOKLEDGER_HOST. On globalThis: server.ts loads its own
// copy of this module through tsx, the pages and routes Next's bundled one, in the same process.
const LISTEN_HOST = Symbol.for("hookledger.listenHost");

/** server.ts, once at start: the address it listens on (a name there is one the dashboard is known by). */
export function rememberListenHost(host: string | undefined): void {
  (globalThis as Record<symbol, unknown>)[LISTEN_HOST] = host;
}

/** The name in a Host value: lower case, without the port, brackets or a final dot; null if it is no host. */
function hostName(value: string): string | null {
  const v = value.trim().toLowerCase();
  const v6 = /^\[([0-9a-f:.]+)\](?::\d*)?$/.exec(v);
  if (v6) return net.isIPv6(v6[1]) ? v6[1] : null;
  const m = /^([^:[\]/\s]+)(?::\d*)?$/.exec(v);
  return m ? m[1].replace(/\.$/, "") : null;
}

function listenName(): string | null {
  const raw = process.env.HOOKLEDGER_HOST?.trim() || ((globalThis as Record<symbol, unknown>)[LISTEN_HOST] as string | undefined);
  const name = raw ? hostName(raw.includes(":") && !raw.startsWith("[") ? `[${raw}]` : raw) : null;
  return name && name !== "0.0.0.0" && name !== "::" ? name : null;
}

/** True when the dashboard answers to this host name. */
export function isKnownHostName(name: string): boolean {
  if (name === "localhost" || net.isIP(name)) return true;
  const pub = publicUrl();
  if (pub && hostName(pub.host) === name) return true;
  return listenName() === name;
}

/** What a refused name is shown as: the attacker chose it, so only host-name characters and not much of it. */
function shown(value: string): string {
  return value.replace(/[^\w.:[\]-]/g, "?").slice(0, 100);
}

/**
 * Why this request's Host (or X-Forwarded-Host) is refused, saying what would
 * be accepted; null when the dashboard answers to it. A request without a
 * Host (HTTP/1.0) is answered: every browser sends one.
 */
export function hostRefusal(headers: Pick<Headers, "get">): string | null {
  const forwarded = headers.get("x-forwarded-host")?.split(",")[0];
  for (const [header, value] of [
    ["Host", headers.get("host")],
    ["X-Forwarded-Host", forwarded],
  ] as const) {
    if (value === null || value === undefined || value.trim() === "") continue;
    const name = hostName(value);
    if (name && isKnownHostName(name)) continue;
    const pub = publicUrl();
    const listen = listenName();
    const asked = shown(name ?? value);
    return pub
      ? `This dashboard is served at ${pub.origin} (${PUBLIC_URL_ENV}); it does not answer to the host name "${asked}" (${header}). Open it at ${pub.origin}.`
      : `This dashboard answers to localhost and its IP addresses${listen ? ` and ${listen}` : ""}, not to the host name "${asked}" (${header}). If people open it under that name (through a proxy, say), set ${PUBLIC_URL_ENV} to that address, e.g. ${PUBLIC_URL_ENV}=https://${asked}.`;
  }
  return null;
}

/** The 421 for a refused Host: JSON for /api/ paths, text for pages and /metrics. */
export function misdirectedResponse(message: string, asJson: boolean): Response {
  const headers = { "cache-control": "no-store", "x-content-type-options": "nosniff" };
  return asJson
    ? new Response(JSON.stringify({ error: { code: "misdirected_request", message, details: null } }), {
        status: 421,
        headers: { ...headers, "content-type": "application/json; charset=utf-8" },
      })
    : new Response(`${message}\n`, { status: 421, headers: { ...headers, "content-type": "text/plain; charset=utf-8" } });
}

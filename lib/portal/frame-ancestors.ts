// Which sites may frame the district portal: HOOKLEDGER_PORTAL_FRAME_ANCESTORS, space-separated origins
// (https://app.example.com, http://localhost:3199, or a wildcard host such as https://*.example.com). A malformed
// entry stops the start, naming it (server.ts and lib/auth/startup.ts check it), like HOOKLEDGER_PUBLIC_URL: a
// typo that silently left the portal unframeable, or framable by the wrong site, would be found by a district.
// Only pages served to a portal session carry these origins; every other page keeps frame-ancestors 'none'.

const FRAME_ANCESTORS_ENV = "HOOKLEDGER_PORTAL_FRAME_ANCESTORS";

/** One origin as CSP source expressions may name it: scheme, host (an optional leading `*.`), port; nothing else. */
function parseOrigin(entry: string): string | null {
  const m = /^(https?):\/\/(\*\.)?([^/?#*\s'";,]+)$/i.exec(entry);
  if (!m) return null;
  let url: URL;
  try {
    url = new URL(`${m[1]}://${m[3]}`);
  } catch {
    return null;
  }
  if (url.username || url.password || url.pathname !== "/" || !url.hostname) return null;
  return `${url.protocol}//${m[2] ?? ""}${url.host}`;
}

/** The origins in a value; throws naming the first entry that is not one. Empty or unset: none (no framing). */
export function parseFrameAncestors(raw: string | undefined): string[] {
  const out: string[] = [];
  for (const entry of (raw ?? "").split(/\s+/).filter(Boolean)) {
    const origin = parseOrigin(entry);
    if (!origin)
      throw new Error(
        `${FRAME_ANCESTORS_ENV}: "${entry}" is not an origin. List the sites that may frame the district portal as space-separated origins, e.g. ${FRAME_ANCESTORS_ENV}="https://app.example.com https://*.example.org" (scheme and host, an optional port, no path); unset it to allow no framing.`,
      );
    if (!out.includes(origin)) out.push(origin);
  }
  return out;
}

let cached: { raw: string | undefined; origins: string[] } | undefined;

/** The configured origins, parsed once per value. */
export function portalFrameAncestors(): string[] {
  const raw = process.env[FRAME_ANCESTORS_ENV];
  if (!cached || cached.raw !== raw) cached = { raw, origins: parseFrameAncestors(raw) };
  return cached.origins;
}

/** True when some site may frame the portal: its cookie must then be SameSite=None; Secure to be sent inside a frame. */
export function portalFramingConfigured(): boolean {
  return portalFrameAncestors().length > 0;
}

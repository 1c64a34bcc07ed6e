// proxy.ts sets the page CSP with a fresh nonce per request and HSTS over https.
import { describe, expect, it } from "vitest";
import { NextRequest } from "next/server";
import { proxy } from "../../proxy";
import nextConfig from "../../next.config";

function scriptSrc(csp: string): string {
  return csp
    .split(";")
    .map((d) => d.trim())
    .find((d) => d.startsWith("script-src"))!;
}

describe("Content-Security-Policy", () => {
  it("script-src has a per-request nonce and no 'unsafe-inline', on pages, redirects and public routes", async () => {
    const seen = new Set<string>();
    for (const path of ["/signin", "/subscriptions", "/api/health", "/metrics", "/password"]) {
      const res = await proxy(new NextRequest(`http://localhost:3000${path}`));
      const csp = res.headers.get("content-security-policy");
      expect(csp, path).toBeTruthy();
      const src = scriptSrc(csp!);
      expect(src, path).not.toContain("'unsafe-inline'");
      const nonce = src.match(/'nonce-([A-Za-z0-9+/=]+)'/)?.[1];
      expect(nonce, path).toBeTruthy();
      seen.add(nonce!);
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("object-src 'none'");
    }
    expect(seen.size).toBe(5);
  });

  it("the request Next renders with carries the same nonce (Next stamps it on its inline scripts)", async () => {
    const res = await proxy(new NextRequest("http://localhost:3000/signin"));
    const csp = res.headers.get("content-security-policy")!;
    expect(csp).toContain("'nonce-");
    expect(res.headers.get("x-middleware-request-content-security-policy")).toBe(csp);
  });

  it("the fixed headers in next.config.ts carry no 'unsafe-inline' script policy for anything", async () => {
    const rules = await nextConfig.headers!();
    const text = JSON.stringify(rules);
    expect(text).not.toMatch(/script-src[^"]*unsafe-inline/);
  });
});

describe("HSTS", () => {
  it("set when the request came over https (x-forwarded-proto from the TLS proxy, or the URL), not over plain http", async () => {
    const viaProxy = await proxy(new NextRequest("http://localhost:3000/signin", { headers: { "x-forwarded-proto": "https" } }));
    expect(viaProxy.headers.get("strict-transport-security")).toBe("max-age=31536000");
    const direct = await proxy(new NextRequest("https://hookledger.example/signin"));
    expect(direct.headers.get("strict-transport-security")).toBe("max-age=31536000");
    const plain = await proxy(new NextRequest("http://localhost:3000/signin"));
    expect(plain.headers.get("strict-transport-security")).toBeNull();
    const rules = await nextConfig.headers!();
    for (const source of ["/api/v1/:path*", "/api/auth/:path*"]) {
      const api = rules.find((r) => r.source === source && r.has);
      expect(api?.headers, source).toEqual([{ key: "Strict-Transport-Security", value: "max-age=31536000" }]);
    }
  });
});

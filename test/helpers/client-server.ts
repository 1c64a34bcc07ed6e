// Every app/api/v1 route file mounted in a plain node:http server, the way a
// producer's client meets them over the network: real sockets, real headers,
// the same handlers `next start` serves. `inject` answers the next requests to
// a path with a given status first (a 429 or 503 with Retry-After), to
// exercise a client's retries against an otherwise real server.
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import type { AddressInfo } from "node:net";

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
type Route = { pattern: RegExp; names: string[]; file: string; methods: Record<string, Handler> };

export function v1RouteFiles(dir = "app/api/v1"): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...v1RouteFiles(p));
    else if (/^route\.tsx?$/.test(e.name)) out.push(p);
  }
  return out.sort();
}

/** app/api/v1/subscriptions/[id]/route.ts → /api/v1/subscriptions/{id} */
export function routePath(file: string): string {
  return (
    "/" +
    path
      .dirname(file)
      .split(path.sep)
      .slice(1)
      .join("/")
      .replace(/\[([^\]]+)\]/g, "{$1}")
  );
}

export type TestServer = { url: string; close: () => Promise<void>; inject: (path: string, answers: { status: number; retryAfter?: string }[]) => void; seen: string[] };

export async function startApiServer(): Promise<TestServer> {
  const routes: Route[] = [];
  for (const file of v1RouteFiles()) {
    const mod = (await import(/* @vite-ignore */ path.resolve(file))) as Record<string, unknown>;
    const names: string[] = [];
    const re = routePath(file).replace(/\{([^}]+)\}/g, (_m, n: string) => {
      names.push(n);
      return "([^/]+)";
    });
    const methods: Record<string, Handler> = {};
    for (const m of ["GET", "POST", "PATCH", "PUT", "DELETE"]) if (typeof mod[m] === "function") methods[m] = mod[m] as Handler;
    // Literal segments before parameters: /redrives/{id} must not catch /redrives/x/cancel.
    routes.push({ pattern: new RegExp(`^${re}$`), names, file, methods });
  }
  const injected = new Map<string, { status: number; retryAfter?: string }[]>();
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      try {
        const url = new URL(req.url ?? "/", "http://127.0.0.1");
        seen.push(`${req.method} ${url.pathname}`);
        const queue = injected.get(url.pathname);
        const fake = queue?.shift();
        if (fake) {
          res.writeHead(fake.status, { "content-type": "application/json", ...(fake.retryAfter ? { "retry-after": fake.retryAfter } : {}) });
          res.end(JSON.stringify({ error: { code: fake.status === 429 ? "rate_limited" : "unavailable", message: "injected", details: null } }));
          return;
        }
        let handler: Handler | undefined;
        let params: Record<string, string> = {};
        for (const r of routes) {
          const m = r.pattern.exec(url.pathname);
          if (!m) continue;
          handler = r.methods[req.method ?? "GET"];
          params = Object.fromEntries(r.names.map((n, i) => [n, decodeURIComponent(m[i + 1])]));
          if (!handler) {
            res.writeHead(405).end();
            return;
          }
          break;
        }
        if (!handler) {
          res.writeHead(404).end();
          return;
        }
        const headers = new Headers();
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
        const request = new Request(url, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
        const response = await handler(request, { params: Promise.resolve(params) });
        res.statusCode = response.status;
        response.headers.forEach((v, k) => res.setHeader(k, v));
        res.end(Buffer.from(await response.arrayBuffer()));
      } catch (err) {
        res.statusCode = 500;
        res.end(String(err));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    inject: (p, answers) => injected.set(p, [...(injected.get(p) ?? []), ...answers]),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

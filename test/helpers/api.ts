// Calling route handlers in-process with real Requests (the same code `next start` serves).
import type { PrismaClient } from "../../lib/db/prisma";
import { createApiToken } from "../../lib/auth/tokens";
import type { Role } from "../../lib/auth/permissions";

export async function tokenFor(prisma: PrismaClient, role: Role): Promise<string> {
  return (await createApiToken(prisma, { role, name: `test-${role}` })).token;
}

type RouteFn = (req: Request, ctx?: { params: Promise<Record<string, string>> }) => Promise<Response>;

export async function call(
  fn: RouteFn,
  opts: { method?: string; path?: string; token?: string; body?: unknown; rawBody?: string; params?: Record<string, string>; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined && !headers["content-type"]) headers["content-type"] = "application/json";
  const req = new Request(`http://localhost${opts.path ?? "/"}`, { method: opts.method ?? (body ? "POST" : "GET"), headers, body });
  const res = await fn(req, { params: Promise.resolve(opts.params ?? {}) });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, json, text, headers: res.headers };
}

// API tokens: random, shown once, stored as a sha256 hash.
import "server-only";
import { createHash, randomBytes } from "node:crypto";
import type { PrismaClient } from "../db/prisma";
import type { Role } from "./permissions";

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/**
 * Creates a token. `tenantId` confines it to one tenant (null or absent = global);
 * the caller has checked the tenant exists (lib/tenants/manage-tenants.ts, requireTenant):
 * the foreign key refuses an unknown one anyway.
 */
export async function createApiToken(
  prisma: PrismaClient,
  opts: { role: Role; name?: string; tenantId?: string | null },
): Promise<{ id: string; token: string; name: string; role: Role; tenantId: string | null }> {
  const token = `hl_${randomBytes(32).toString("base64url")}`;
  const id = `tok_${randomBytes(8).toString("hex")}`;
  const name = opts.name ?? `${opts.role}-${id.slice(4, 10)}`;
  const tenantId = opts.tenantId ?? null;
  await prisma.apiToken.create({ data: { id, name, role: opts.role, tokenHash: hashToken(token), tenantId } });
  return { id, token, name, role: opts.role, tenantId };
}

export type TokenPrincipal = { kind: "token"; id: string; name: string; role: Role; actor: string; tenantId: string | null };

/**
 * How long a producer token's lookup is reused in this process: a revoked
 * producer token keeps publishing for at most this long (per process). Producers
 * are the machine callers at thousands of requests a second (BENCHMARKS.md F5);
 * the producer role can do nothing but publish. Every other role is read from
 * the database on every request, so revoking a person's or an integration's
 * token takes effect at once. Unknown tokens are never cached, so a new token
 * works at once.
 */
export const TOKEN_CACHE_TTL_MS = 5_000;
const CACHE_MAX = 1_000;
const cache = new Map<string, { principal: TokenPrincipal; until: number }>();

/** For tests: forget every cached lookup. */
export function clearTokenCache(): void {
  cache.clear();
}

export async function findTokenPrincipal(prisma: PrismaClient, token: string): Promise<TokenPrincipal | null> {
  const hash = hashToken(token);
  const hit = cache.get(hash);
  if (hit && hit.until > Date.now()) return { ...hit.principal };
  if (hit) cache.delete(hash);
  const row = await prisma.apiToken.findUnique({ where: { tokenHash: hash } });
  if (!row || row.revokedAt) return null;
  // last_used_at is informational, to the minute: writing it on every call made a
  // hot-row update per published event (BENCHMARKS.md F5). A failure must not fail the call.
  if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() > 60_000)
    prisma.apiToken.update({ where: { id: row.id }, data: { lastUsedAt: new Date() } }).catch(() => {});
  const principal: TokenPrincipal = { kind: "token", id: row.id, name: row.name, role: row.role as Role, actor: `token:${row.name}`, tenantId: row.tenantId ?? null };
  if (principal.role === "producer") {
    if (cache.size >= CACHE_MAX) cache.clear();
    cache.set(hash, { principal, until: Date.now() + TOKEN_CACHE_TTL_MS });
  }
  return { ...principal };
}

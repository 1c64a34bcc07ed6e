// API tokens: random, shown once, stored as a sha256 hash.
import { createHash, randomBytes } from "node:crypto";
import type { PrismaClient } from "../db/prisma";
import type { Role } from "./permissions";

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

export async function createApiToken(
  prisma: PrismaClient,
  opts: { role: Role; name?: string },
): Promise<{ id: string; token: string; name: string; role: Role }> {
  const token = `hl_${randomBytes(32).toString("base64url")}`;
  const id = `tok_${randomBytes(8).toString("hex")}`;
  const name = opts.name ?? `${opts.role}-${id.slice(4, 10)}`;
  await prisma.apiToken.create({ data: { id, name, role: opts.role, tokenHash: hashToken(token) } });
  return { id, token, name, role: opts.role };
}

export async function findTokenPrincipal(prisma: PrismaClient, token: string) {
  const row = await prisma.apiToken.findUnique({ where: { tokenHash: hashToken(token) } });
  if (!row || row.revokedAt) return null;
  // last_used_at is informational, to the minute: writing it on every call made a
  // hot-row update per published event (BENCHMARKS.md F5). A failure must not fail the call.
  if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() > 60_000)
    prisma.apiToken.update({ where: { id: row.id }, data: { lastUsedAt: new Date() } }).catch(() => {});
  return { kind: "token" as const, id: row.id, name: row.name, role: row.role as Role, actor: `token:${row.name}` };
}

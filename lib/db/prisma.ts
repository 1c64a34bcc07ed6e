import "server-only";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../generated/prisma/client";
import { databaseUrl } from "./url";
import { REQUEST_STATEMENT_TIMEOUT_MS } from "./pool";

export type { PrismaClient };
export type Tx = Parameters<Parameters<PrismaClient["$transaction"]>[0]>[0];

const g = globalThis as unknown as { __hookledgerPrisma?: PrismaClient };

export function createPrisma(url = databaseUrl()): PrismaClient {
  // Dashboard queries carry a statement timeout (docs/DESIGN.md, Scale).
  const adapter = new PrismaPg({ connectionString: url, statement_timeout: REQUEST_STATEMENT_TIMEOUT_MS, max: 10 });
  return new PrismaClient({ adapter });
}

/** The process-wide client (a globalThis singleton survives Next's module reloads). */
export function getPrisma(): PrismaClient {
  if (!g.__hookledgerPrisma) g.__hookledgerPrisma = createPrisma();
  return g.__hookledgerPrisma;
}

/** For tests: point the process-wide client at a given database. */
export function setPrisma(client: PrismaClient | undefined) {
  g.__hookledgerPrisma = client;
}

// What `hookledger start` checks about access control before it spawns the
// dashboard and workers (one call in lib/cli/start.ts).
import { createPrisma } from "../db/prisma";
import { ensureSecretKey } from "./keys";
import { FIRST_ADMIN_COMMAND, countUsers } from "./users";

/**
 * Fails fast when an external database has no HOOKLEDGER_SECRET_KEY; creates
 * the embedded install's key file; tells the operator how to create the first
 * admin when there is no user.
 */
export async function prepareAuth(db: { url: string; embedded: boolean }, opts: { demo?: boolean } = {}): Promise<void> {
  ensureSecretKey({ embedded: db.embedded });
  const prisma = createPrisma(db.url);
  try {
    // The demo creates and prints its own admin.
    if (!opts.demo && (await countUsers(prisma)) === 0) console.error(`No dashboard users yet. Create the first admin with:\n  ${FIRST_ADMIN_COMMAND}`);
  } finally {
    await prisma.$disconnect();
  }
}

// What `hookledger start` checks about access control before it spawns the
// dashboard and workers (one call in cli/start.ts).
import "server-only";
import path from "node:path";
import { createPrisma } from "../db/prisma";
import { dataDir } from "../db/embedded";
import { usesEmbeddedDatabase } from "../db/url";
import { ensureSecretKey } from "./keys";
import { DEMO_ADMIN_EMAIL, FIRST_ADMIN_COMMAND, countUsers } from "./users";

/**
 * Reads every setting the dashboard reads at load, so a malformed one
 * (HOOKLEDGER_MAX_PAYLOAD_BYTES=abc, HOOKLEDGER_TRUSTED_PROXIES=proxy.internal)
 * stops `hookledger start` with its message before anything is spawned,
 * rather than failing each request later.
 */
export async function checkSettings(): Promise<void> {
  await import("../api/handler");
  await import("./rate-limit");
  await import("./password");
  await import("../rollups/sampler");
  (await import("./proxies")).trustedProxies();
  (await import("./host")).publicUrl();
  (await import("../net/ssrf")).denyTargets();
  (await import("../portal/frame-ancestors")).portalFrameAncestors();
}

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
    if (!opts.demo && (await countUsers(prisma)) === 0) console.error(`No dashboard users yet. Create the first admin with:\n  ${firstAdminCommand(db)}`);
    // Rows from before row binding (plaintext whsec_, unbound v1) are never used to sign: convert them now.
    const { rekeySecrets } = await import("../subscriptions/secrets");
    const legacy = await rekeySecrets(prisma, { legacyOnly: true });
    if (legacy.converted) console.error(`Converted ${legacy.converted} signing secret(s) stored in an older format to the row-bound v2 format.`);
    for (const f of legacy.failed) console.error(`A signing secret cannot be opened (${f.id}): ${f.error}`);
    if (!opts.demo) {
      const demo = await prisma.user.findUnique({ where: { email: DEMO_ADMIN_EMAIL }, select: { id: true, disabledAt: true } });
      if (demo && !demo.disabledAt) console.error(demoUserWarning(demo.id));
    }
  } finally {
    await prisma.$disconnect();
  }
}

/**
 * The first-admin command as this install's operator must type it. The CLI finds its database as `start` did, from
 * HOOKLEDGER_DATA_DIR or DATABASE_URL: run without them, it would create the user in ./.data (a demo's database,
 * say) and the sign-in would refuse the password.
 */
export function firstAdminCommand(
  db: { embedded: boolean },
  env: Record<string, string | undefined> = process.env,
  /** Where it is read: in the terminal `start` prints to, "this" DATABASE_URL is the one just used; a web page has none of its own. */
  shownOn: "terminal" | "page" = "terminal",
): string {
  if (!db.embedded) return `${FIRST_ADMIN_COMMAND}   (${shownOn === "page" ? "with the server's DATABASE_URL set in your shell" : "with this DATABASE_URL set"})`;
  const dir = env.HOOKLEDGER_DATA_DIR?.trim();
  if (!dir) return FIRST_ADMIN_COMMAND;
  const abs = path.resolve(dir);
  return `HOOKLEDGER_DATA_DIR=${/^[\w@%+=:,./-]+$/.test(abs) ? abs : `'${abs.replace(/'/g, "'\\''")}'`} ${FIRST_ADMIN_COMMAND}`;
}

/**
 * The first-admin command for the sign-in page's "No users yet" hint: for the database this server reads, wherever
 * it is pasted. Its embedded database's folder is always named (the server's working directory is not the reader's;
 * run elsewhere, the CLI would make the admin in another folder's database), an external one by DATABASE_URL.
 */
export function firstAdminCommandForServer(): string {
  const embedded = usesEmbeddedDatabase();
  return firstAdminCommand({ embedded }, embedded ? { HOOKLEDGER_DATA_DIR: dataDir() } : {}, "page");
}

/** Loud on purpose: a demo admin left in a real install is an admin whose password sat in a terminal and a file. */
export function demoUserWarning(id: string): string {
  const bar = "!".repeat(78);
  return [
    bar,
    `WARNING: the demo admin ${DEMO_ADMIN_EMAIL} (${id}) exists in this database, and this is not a demo start.`,
    "Its password was printed by `hookledger start --demo` and is stored under the data directory.",
    "If this install is not a demo, disable that user on the dashboard's Users page (or delete the row).",
    bar,
  ].join("\n");
}

// `hookledger secrets rekey`: re-seals every stored signing secret under the
// current HOOKLEDGER_SECRET_KEY. To rotate the key: give every process the new
// key in HOOKLEDGER_SECRET_KEY and the old one in HOOKLEDGER_SECRET_KEY_PREVIOUS,
// run this, then remove HOOKLEDGER_SECRET_KEY_PREVIOUS. It also converts rows
// from before row binding (plaintext `whsec_`, unbound v1).
import type { Command } from "commander";
import { withDatabase } from "./db";

export function registerSecretsCommands(program: Command) {
  const secrets = program.command("secrets").description("Signing secrets at rest.");
  secrets
    .command("rekey")
    .description("Re-seal every stored signing secret under the current HOOKLEDGER_SECRET_KEY (old key in HOOKLEDGER_SECRET_KEY_PREVIOUS); safe to run again.")
    .action(async () => {
      await withDatabase(async (url) => {
        const { createPrisma } = await import("../lib/db/prisma");
        const { rekeySecrets, currentSecretsKeyId } = await import("../lib/subscriptions/secrets");
        const prisma = createPrisma(url);
        try {
          const r = await rekeySecrets(prisma);
          console.log(
            `Signing secrets: ${r.total} stored; ${r.resealed} re-sealed and ${r.converted} converted to key ${currentSecretsKeyId()}; ${r.current} already current.`,
          );
          for (const f of r.failed) console.error(`  ${f.id}: ${f.error}`);
          if (r.failed.length) {
            console.error(
              `${r.failed.length} secret(s) could not be opened and were left as they are: put the key they were sealed with in HOOKLEDGER_SECRET_KEY_PREVIOUS and run this again, or rotate those subscriptions' secrets.`,
            );
            process.exitCode = 1;
          }
        } finally {
          await prisma.$disconnect();
        }
      });
    });
}

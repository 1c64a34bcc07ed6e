// `hookledger token create`: an API token, printed alone on the last line and
// never shown again. `--tenant` confines it to one tenant (district): a
// producer token then publishes for that tenant only, any other role reads and
// acts on that tenant's subscriptions and deliveries only. A `portal` token (it
// mints district portal links, README "District portal") is always global.
import type { Command } from "commander";
import { ROLES, type Role } from "../lib/auth/permissions";
import { withDatabase } from "./db";
import { cliPrincipal, exitOnRefusal } from "./options";

export function registerTokenCommands(program: Command) {
  const token = program.command("token").description("API tokens.");
  token
    .command("create")
    .description("Create an API token; the token is printed alone on the last line and never shown again.")
    .requiredOption("--role <role>", `one of ${ROLES.join(", ")}`)
    .option("--name <name>", "a label for audit rows")
    .option("--tenant <id>", "confine the token to this tenant (it must exist: `hookledger tenant create`); default: global")
    .action(async (opts: { role: string; name?: string; tenant?: string }) => {
      if (!ROLES.includes(opts.role as Role)) {
        console.error(`--role must be one of ${ROLES.join(", ")} (got ${opts.role}).`);
        process.exit(2);
      }
      await withDatabase(async (url) => {
        const { createPrisma } = await import("../lib/db/prisma");
        const { createTokenAsAdmin } = await import("../lib/auth/admin");
        const { requireTenant } = await import("../lib/tenants/manage-tenants");
        const prisma = createPrisma(url);
        try {
          const tenantId = await requireTenant(prisma, opts.tenant, "--tenant");
          // The admin page's use case: its checks and its token.create audit row, by the OS user.
          const t = await createTokenAsAdmin(prisma, { role: opts.role, name: opts.name, tenantId }, cliPrincipal());
          console.log(`Created ${t.role} token "${t.name}" (${t.id})${tenantId ? ` for tenant ${tenantId}` : ""}. Store it now; it is not shown again.`);
          console.log(t.token);
        } catch (err) {
          await exitOnRefusal("token create", err);
        } finally {
          await prisma.$disconnect();
        }
      });
    });
}

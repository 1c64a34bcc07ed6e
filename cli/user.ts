// `hookledger user create`: dashboard users, with a one-time password printed
// alone on the last line (docs/API.md); audited as `cli:<os user>@<host>`, the
// same row the admin page writes.
import type { Command } from "commander";
import { USER_ROLES } from "../lib/auth/users";
import { withDatabase } from "./db";
import { cliPrincipal, exitOnRefusal } from "./options";

export function registerUserCommands(program: Command) {
  const user = program.command("user").description("Dashboard users.");
  user
    .command("create")
    .description("Create a dashboard user; a one-time password is printed alone on the last line and never shown again.")
    .requiredOption("--email <email>", "the user's email, used to sign in and in audit rows")
    .requiredOption("--role <role>", `one of ${USER_ROLES.join(", ")} (producers use API tokens: \`hookledger token create --role producer\`)`)
    .option("--tenant <id>", "confine the user to this tenant (it must exist: `hookledger tenant create`); default: global")
    .action(async (opts: { email: string; role: string; tenant?: string }) => {
      await withDatabase(async (url) => {
        const { createPrisma } = await import("../lib/db/prisma");
        const { createUserAsAdmin } = await import("../lib/auth/admin");
        const { requireTenant } = await import("../lib/tenants/manage-tenants");
        const prisma = createPrisma(url);
        try {
          const tenantId = await requireTenant(prisma, opts.tenant, "--tenant");
          // The dashboard's own use case: the same checks and the same user.create audit row, by the OS user; the
          // operator sees this password, so the user must choose their own at first sign-in.
          const u = await createUserAsAdmin(prisma, { email: opts.email, role: opts.role, tenantId }, cliPrincipal());
          console.log(
            `Created ${u.role} user ${u.email} (${u.id})${tenantId ? ` for tenant ${tenantId}` : ""}. Sign in with this one-time password now (it is not shown again); the dashboard then asks for a new one.`,
          );
          console.log(u.password);
        } catch (err) {
          await exitOnRefusal("user create", err);
        } finally {
          await prisma.$disconnect();
        }
      });
    });
}

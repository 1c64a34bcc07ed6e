// `hookledger user create`: dashboard users, with a one-time password printed
// alone on the last line (INTERFACES.md).
import type { Command } from "commander";
import { USER_ROLES } from "../auth/users";
import { withDatabase } from "./db";

export function registerUserCommands(program: Command) {
  const user = program.command("user").description("Dashboard users.");
  user
    .command("create")
    .description("Create a dashboard user; a one-time password is printed alone on the last line and never shown again.")
    .requiredOption("--email <email>", "the user's email, used to sign in and in audit rows")
    .requiredOption("--role <role>", `one of ${USER_ROLES.join(", ")} (producers use API tokens: \`hookledger token create --role producer\`)`)
    .action(async (opts: { email: string; role: string }) => {
      await withDatabase(async (url) => {
        const { createPrisma } = await import("../db/prisma");
        const { createUser } = await import("../auth/users");
        const { AppError } = await import("../errors");
        const prisma = createPrisma(url);
        try {
          const u = await createUser(prisma, { email: opts.email, role: opts.role });
          console.log(`Created ${u.role} user ${u.email} (${u.id}). Sign in with this password now; it is not shown again.`);
          console.log(u.password);
        } catch (err) {
          if (err instanceof AppError) {
            console.error(`hookledger user create: ${err.message}`);
            process.exitCode = 2;
          } else throw err;
        } finally {
          await prisma.$disconnect();
        }
      });
    });
}

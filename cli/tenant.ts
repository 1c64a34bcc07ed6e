// `hookledger tenant create|list`: tenants (districts) as rows. Users and
// tokens are confined to one with `--tenant` (`hookledger user create`,
// `hookledger token create`); subscriptions name theirs.
import type { Command } from "commander";
import { withDatabase } from "./db";
import { cliPrincipal, exitOnRefusal } from "./options";

export function registerTenantCommands(program: Command) {
  const tenant = program.command("tenant").description("Tenants (districts).");
  tenant
    .command("create")
    .description("Register a tenant.")
    .requiredOption("--id <id>", "the tenant's id, as producers send it in subject.tenant (e.g. lincoln)")
    .requiredOption("--name <name>", 'its name, e.g. "Lincoln USD"')
    .action(async (opts: { id: string; name: string }) => {
      await withDatabase(async (url) => {
        const { createPrisma } = await import("../lib/db/prisma");
        const { createTenant } = await import("../lib/tenants/manage-tenants");
        const prisma = createPrisma(url);
        try {
          const t = await createTenant(prisma, { id: opts.id, name: opts.name }, cliPrincipal());
          console.log(`Created tenant ${t.id} (${t.name}).`);
        } catch (err) {
          await exitOnRefusal("tenant create", err, "--id/--name");
        } finally {
          await prisma.$disconnect();
        }
      });
    });
  tenant
    .command("list")
    .description("List the tenants (every page), by id.")
    .option("--q <text>", "only those whose id or name contains this (any case)")
    .action(async (opts: { q?: string }) => {
      await withDatabase(async (url) => {
        const { createPrisma } = await import("../lib/db/prisma");
        const { listTenantPage } = await import("../lib/tenants/manage-tenants");
        const prisma = createPrisma(url);
        try {
          // Page by page, so thousands of districts are all listed without holding them at once.
          let cursor: string | undefined;
          let listed = 0;
          do {
            const page = await listTenantPage(prisma, cliPrincipal(), { q: opts.q, cursor, limit: 500 });
            for (const t of page.items) console.log(`${t.id}\t${t.name}`);
            listed += page.items.length;
            cursor = page.nextCursor ?? undefined;
          } while (cursor);
          // Said, not an empty output that reads like a failure to connect.
          if (listed === 0)
            console.log(
              opts.q
                ? `No tenant's id or name contains ${JSON.stringify(opts.q)}.`
                : 'No tenants yet: add one with `npx hookledger tenant create --id lincoln --name "Lincoln USD"`.',
            );
        } catch (err) {
          await exitOnRefusal("tenant list", err, "--q");
        } finally {
          await prisma.$disconnect();
        }
      });
    });
}

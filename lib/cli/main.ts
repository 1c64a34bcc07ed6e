import { Command, InvalidArgumentError, Option } from "commander";
import { ROLES, type Role } from "../auth/permissions";
import { migrate } from "../db/migrate";
import { openDatabase, withDatabase } from "./db";
import { registerRedriveCommand } from "./redrive";
import { registerDlqCommand } from "./dlq";
import { registerUserCommands } from "./user";
import pkg from "../../package.json" with { type: "json" };

const program = new Command()
  .name("hookledger")
  .description("Outbound webhook delivery with an operations dashboard.")
  .version(pkg.version);

function int(name: string, min: number) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be a whole number ≥ ${min}.`);
    return n;
  };
}

program
  .command("migrate")
  .description("Apply pending SQL migrations (prisma/migrations); fails loudly on any error.")
  .action(async () => {
    const db = await openDatabase();
    try {
      const applied = await migrate(db.url);
      console.log(applied.length ? applied.join("\n") : "No pending migrations.");
    } finally {
      if (db.owned) await db.stop();
    }
  });

program
  .command("start")
  .description("Migrations, the dashboard and N worker processes (with --demo: simulated districts and traffic).")
  .option("--demo", "also start simulated school districts and a traffic generator", false)
  .addOption(new Option("--workers <n>", "worker processes (0: dashboard only)").default(1).argParser(int("--workers", 0)))
  .addOption(new Option("--port <port>", "dashboard and API port").env("PORT").default(3000).argParser(int("--port", 1)))
  .option("--build", "rebuild the dashboard even if the build looks current", false)
  .action(async (opts: { demo: boolean; workers: number; port: number; build: boolean }) => {
    const { start } = await import("./start");
    await start(opts);
  });

program
  .command("worker")
  .description("Run one delivery worker process (structured logs on stdout).")
  .action(async () => {
    const db = await openDatabase({ quiet: true });
    const { runWorker, takeOverSignals } = await import("../../worker/main");
    if (!db.embedded) {
      // An external database may not be up yet: wait for it. A SIGTERM meanwhile ends the wait and the process with 0.
      const stop = new AbortController();
      const release = takeOverSignals(() => stop.abort());
      const { logger } = await import("../log");
      const { waitForDatabase } = await import("../db/wait");
      const up = await waitForDatabase(db.url, logger, stop.signal);
      release();
      if (!up) return;
    }
    await migrate(db.url);
    await runWorker({ databaseUrl: db.url });
    if (db.owned) await db.stop();
  });

const token = program.command("token").description("API tokens.");
token
  .command("create")
  .description("Create an API token; the token is printed alone on the last line and never shown again.")
  .requiredOption("--role <role>", `one of ${ROLES.join(", ")}`)
  .option("--name <name>", "a label for audit rows")
  .action(async (opts: { role: string; name?: string }) => {
    if (!ROLES.includes(opts.role as Role)) {
      console.error(`--role must be one of ${ROLES.join(", ")} (got ${opts.role}).`);
      process.exit(2);
    }
    await withDatabase(async (url) => {
      const { createPrisma } = await import("../db/prisma");
      const { createApiToken } = await import("../auth/tokens");
      const prisma = createPrisma(url);
      const t = await createApiToken(prisma, { role: opts.role as Role, name: opts.name });
      await prisma.$disconnect();
      console.log(`Created ${t.role} token "${t.name}" (${t.id}). Store it now; it is not shown again.`);
      console.log(t.token);
    });
  });

registerUserCommands(program);

registerRedriveCommand(program);
registerDlqCommand(program);

export { program };

program.parseAsync(process.argv).catch((err: Error) => {
  console.error(`hookledger: ${err.message}`);
  process.exit(1);
});

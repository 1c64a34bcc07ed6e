import { Command, InvalidArgumentError, Option } from "commander";
import { migrate } from "../lib/db/migrate";
import { openDatabase } from "./db";
import { registerRedriveCommand } from "./redrive";
import { registerResolveCommand } from "./resolve";
import { registerEraseCommand } from "./erase";
import { registerRetentionCommand } from "./retention";
import { registerRecoverCommand } from "./recover";
import { registerBackfillCommand } from "./backfill";
import { registerDlqCommand } from "./dlq";
import { registerPublishCommand } from "./publish";
import { registerUserCommands } from "./user";
import { registerTokenCommands } from "./token";
import { registerTenantCommands } from "./tenant";
import { registerSecretsCommands } from "./secrets";
import { registerSubscriptionsCommands } from "./subscriptions";
import pkg from "../package.json" with { type: "json" };

// A usage mistake (an unknown command or flag, a missing or malformed value) exits 2, as each command's own checks
// of its input do; 1 is left to a failure while doing the work. Commands inherit this from the program.
const program = new Command()
  .name("hookledger")
  .description("Outbound webhook delivery with an operations dashboard.")
  .version(pkg.version)
  .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2));

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
  .option("--verbose", "print the build output, migrations and other start-up detail here too (they always go to <data dir>/logs/start.log)", false)
  .addOption(new Option("--host <address>", "address the dashboard listens on (default: every interface; with --demo 127.0.0.1)").env("HOOKLEDGER_HOST"))
  .addOption(
    new Option("--demo-external-database", "let --demo write its districts, traffic and admin into an external DATABASE_URL")
      .env("HOOKLEDGER_DEMO_EXTERNAL_DATABASE")
      .default(false),
  )
  .action(async (opts: { demo: boolean; workers: number; port: number; build: boolean; host?: string; demoExternalDatabase?: boolean | string; verbose: boolean }) => {
    const { start } = await import("./start");
    await start(opts);
  });

program
  .command("worker")
  .description("Run one delivery worker process (structured logs on stdout).")
  .action(async () => {
    (await import("../lib/server/supervisor")).stopWhenSupervisorGone();
    const db = await openDatabase({ quiet: true });
    const { runWorker, takeOverSignals } = await import("../worker/main");
    if (!db.embedded) {
      // An external database may not be up yet: wait for it. A SIGTERM meanwhile ends the wait and the process with 0.
      const stop = new AbortController();
      const release = takeOverSignals(() => stop.abort());
      const { logger } = await import("../lib/log");
      const { waitForDatabase } = await import("../lib/db/wait");
      const up = await waitForDatabase(db.url, logger, stop.signal);
      release();
      if (!up) return;
    }
    await migrate(db.url);
    await runWorker({ databaseUrl: db.url });
    if (db.owned) await db.stop();
  });

registerTokenCommands(program);
registerTenantCommands(program);
registerUserCommands(program);
registerSecretsCommands(program);
registerSubscriptionsCommands(program);

registerRedriveCommand(program);
registerResolveCommand(program);
registerEraseCommand(program);
registerRetentionCommand(program);
registerRecoverCommand(program);
registerBackfillCommand(program);
registerDlqCommand(program);
registerPublishCommand(program);

export { program };

program.parseAsync(process.argv).catch((err: Error) => {
  // The version refusal is already one whole sentence that starts with our name.
  console.error(err.name === "ServerVersionError" ? err.message : `hookledger: ${err.message}`);
  process.exit(1);
});

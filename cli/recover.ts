// `hookledger recover`: a subscription's deliveries created in a window sent
// again, as a paced, audited, cancellable batch (the bulk-redrive machinery,
// kind recover). Prints the count by state and a sample first; with --dry-run
// stops there. Otherwise creates the batch (audited as the CLI user) and
// follows it until done. Ctrl-C stops following, not the batch.
import { Option, type Command } from "commander";
import { cliPrincipal, intIn, parseWhen } from "./options";
import { withDatabase } from "./db";
import { followBatch, printMore } from "./follow-batch";
import { DEFAULT_RATE_PER_SECOND, MAX_RATE_PER_SECOND, RECOVER_STATES } from "../lib/redrive/redrive-input";
import { count } from "../lib/words";

export type WindowOpts = { subscription: string; since: string; until?: string; reason?: string; rate: number; dryRun: boolean; detach: boolean };
type Opts = WindowOpts & { states?: string };

/** The flags recover and backfill share. */
export function addWindowOptions(cmd: Command): Command {
  return cmd
    .requiredOption("--subscription <id>", "the subscription")
    .addOption(new Option("--since <time>", "created at or after (ISO time, or an age: 30m, 6h, 2d)").argParser(parseWhen("--since")).makeOptionMandatory())
    .addOption(new Option("--until <time>", "created before (ISO time, or an age); default now").argParser(parseWhen("--until")))
    .option("--reason <text>", "why: an incident or ticket id (required unless --dry-run)")
    .addOption(new Option("--rate <n>", "deliveries per second").default(DEFAULT_RATE_PER_SECOND).argParser(intIn("--rate", 1, MAX_RATE_PER_SECOND)))
    .option("--dry-run", "print the count and a sample; change nothing", false)
    .option("--detach", "create the batch and return without following it", false);
}

/** A batch needs a reason; a preview does not (it changes nothing). False after saying so on stderr: exit 2. */
export function reasonGiven(command: string, opts: WindowOpts): boolean {
  if (opts.dryRun || opts.reason?.trim()) return true;
  console.error(`hookledger ${command}: --reason is required: say why, with an incident or ticket id (e.g. --reason INC-2231). Use --dry-run to preview.`);
  return false;
}

export function registerRecoverCommand(program: Command) {
  addWindowOptions(program.command("recover").description("Send a subscription's deliveries created in a window again, as a paced, audited, cancellable batch."))
    .option("--states <list>", `comma-separated states to send again (default ${RECOVER_STATES.join(",")})`)
    .addHelpText(
      "after",
      "\nExamples:\n  hookledger recover --subscription sub_lincoln --since 2026-11-24T00:00:00Z --until 2026-11-25T00:00:00Z --reason INC-2301 --dry-run\n  hookledger recover --subscription sub_lincoln --since 2d --reason INC-2301 --rate 50",
    )
    .action(async (opts: Opts) => {
      if (!reasonGiven("recover", opts)) process.exit(2);
      const body = {
        since: opts.since,
        ...(opts.until ? { until: opts.until } : {}),
        ...(opts.states ? { states: opts.states.split(",").map((s) => s.trim()) } : {}),
        reason: opts.reason,
        ratePerSecond: opts.rate,
        dryRun: opts.dryRun,
      };
      process.exit(await withDatabase((url) => runRecover(url, opts, body)));
    });
}

async function runRecover(url: string, opts: Opts, body: Record<string, unknown>): Promise<number> {
  const { createPrisma } = await import("../lib/db/prisma");
  const { AppError } = await import("../lib/errors");
  const { ZRecover } = await import("../lib/redrive/redrive-input");
  const { previewRecover, createRecoverBatch } = await import("../lib/recover/recover-and-backfill");
  const prisma = createPrisma(url);
  try {
    const parsed = ZRecover.safeParse(body);
    if (!parsed.success) {
      const i = parsed.error.issues[0];
      console.error(`hookledger recover: ${i.path.length ? `${i.path.join(".")}: ` : ""}${i.message}`);
      return 2;
    }
    const preview = await previewRecover(prisma, opts.subscription, parsed.data);
    const by = Object.entries(preview.byState)
      .map(([s, n]) => `${n} ${s}`)
      .join(", ");
    console.log(
      `Matched ${count(preview.matched, "delivery", "deliveries")} of ${preview.subscriptionId} created between ${preview.since} and ${preview.until}${by ? ` (${by})` : ""}.`,
    );
    for (const s of preview.sample) console.log(`  ${s.id}  ${s.eventId}  ${s.eventType}  ${s.state}  ${s.createdAt}`);
    printMore(preview.matched, preview.sample.length);
    if (opts.dryRun) {
      console.log("Dry run: nothing changed.");
      return 0;
    }
    if (preview.matched === 0) {
      console.log("Nothing to recover.");
      return 0;
    }
    const principal = cliPrincipal();
    const batch = await createRecoverBatch(prisma, opts.subscription, { ...parsed.data, reason: parsed.data.reason! }, principal);
    return await followBatch(url, prisma, batch, principal.actor, opts.detach, { kind: true, verb: "sent again", failed: "failed" });
  } catch (err) {
    if (err instanceof AppError) {
      console.error(`hookledger recover: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await prisma.$disconnect();
  }
}

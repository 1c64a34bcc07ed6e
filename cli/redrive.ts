// `hookledger redrive`: a bulk redrive from the terminal. Prints the matched
// count (and a sample) first; with --dry-run stops there. Otherwise creates the
// batch (audited as the CLI user), then follows its progress until done. The
// batch is persisted: Ctrl-C stops following, not the batch, which the
// workers' pacers go on draining.
import { Option, type Command } from "commander";
import { addDlqFilterOptions, cliPrincipal, dlqFilterFrom, intIn, type DlqFilterOpts } from "./options";
import { withDatabase } from "./db";
import { followBatch, printMore } from "./follow-batch";
import { DEFAULT_RATE_PER_SECOND, MAX_RATE_PER_SECOND } from "../lib/redrive/redrive-input";
import { num, noun } from "../lib/words";

type Opts = DlqFilterOpts & {
  reason?: string;
  rate: number;
  latestStateWins: boolean;
  dryRun: boolean;
  detach: boolean;
};

export function registerRedriveCommand(program: Command) {
  addDlqFilterOptions(program.command("redrive").description("Redrive dead-lettered deliveries matching a filter, as a paced, audited, cancellable batch."))
    .option("--reason <text>", "why: an incident or ticket id (required unless --dry-run)")
    .addOption(
      new Option("--rate <n>", "deliveries per second moved back to the queue").default(DEFAULT_RATE_PER_SECOND).argParser(intIn("--rate", 1, MAX_RATE_PER_SECOND)),
    )
    .option("--latest-state-wins", "skip an event when a newer one of the same type and subject was already delivered", false)
    .option("--dry-run", "print the count and a sample; change nothing", false)
    .option("--detach", "create the batch and return without following it", false)
    .addHelpText(
      "after",
      "\nExamples:\n  hookledger redrive --subscription sub_lincoln --status 422 --dry-run\n  hookledger redrive --subscription sub_lincoln --status 422 --reason INC-2231 --rate 20",
    )
    .action(async (opts: Opts) => {
      if (!opts.dryRun && !opts.reason?.trim()) {
        console.error("hookledger redrive: --reason is required: say why, with an incident or ticket id (e.g. --reason INC-2231). Use --dry-run to preview.");
        process.exit(2);
      }
      const filter = dlqFilterFrom(opts);
      const code = await withDatabase((url) => runRedrive(url, opts, filter));
      process.exit(code);
    });
}

async function runRedrive(url: string, opts: Opts, filter: Record<string, unknown>): Promise<number> {
  const { createPrisma } = await import("../lib/db/prisma");
  const { AppError } = await import("../lib/errors");
  const { ZRedriveFilter } = await import("../lib/redrive/redrive-input");
  const { previewRedrive, createRedriveBatch } = await import("../lib/redrive/redrive-batches");
  const prisma = createPrisma(url);
  try {
    const parsed = ZRedriveFilter.safeParse(filter);
    if (!parsed.success) {
      console.error(`hookledger redrive: ${parsed.error.issues[0].message}`);
      return 2;
    }
    const preview = await previewRedrive(prisma, { filter: parsed.data, latestStateWins: opts.latestStateWins });
    console.log(`Matched ${num(preview.matched)} dead-lettered ${noun(preview.matched, "delivery", "deliveries")}.`);
    if (preview.matched > 0) console.log(`  dead-lettered between ${preview.oldestDeadLetteredAt} and ${preview.newestDeadLetteredAt}; oldest first:`);
    for (const s of preview.sample)
      console.log(`  ${s.id}  ${s.subscriptionId}  ${s.eventId}  ${s.deadLetterReason ?? "-"}  ${s.lastErrorClass ?? "-"}  ${s.lastStatusCode ?? "-"}`);
    printMore(preview.matched, preview.sample.length);
    if (preview.superseded) console.log(`${preview.superseded} would be skipped now: a newer event for the same subject was already delivered.`);
    for (const h of preview.held) console.log(`Not included: ${h.count} on ${h.subscriptionId} (${h.state}). ${h.message}`);
    if (opts.dryRun) {
      console.log("Dry run: nothing changed.");
      return 0;
    }
    if (preview.matched === 0) {
      console.log("Nothing to redrive.");
      return 0;
    }

    const principal = cliPrincipal();
    const batch = await createRedriveBatch(
      prisma,
      { filter: parsed.data, reason: opts.reason!.trim(), ratePerSecond: opts.rate, latestStateWins: opts.latestStateWins },
      principal,
    );
    return await followBatch(url, prisma, batch, principal.actor, opts.detach, { verb: "redriven", failed: "failed again" });
  } catch (err) {
    if (err instanceof AppError) {
      console.error(`hookledger redrive: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await prisma.$disconnect();
  }
}

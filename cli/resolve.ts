// `hookledger resolve`: resolve the dead letters a filter matches, with a
// decision and a reason. Prints the matched count (and a sample) first; with
// --dry-run stops there. Otherwise resolves them all in one transaction,
// audited as the CLI user, and prints how many moved.
import { Option, type Command } from "commander";
import { RESOLUTIONS, type Resolution } from "../lib/ledger/states";
import { withDatabase } from "./db";
import { printMore } from "./follow-batch";
import { addDlqFilterOptions, cliPrincipal, dlqFilterFrom, type DlqFilterOpts } from "./options";
import { num, noun } from "../lib/words";

type Opts = DlqFilterOpts & {
  resolution?: Resolution;
  reason?: string;
  dryRun: boolean;
};

export function registerResolveCommand(program: Command) {
  addDlqFilterOptions(
    program
      .command("resolve")
      .description("Resolve dead-lettered deliveries matching a filter: record that they will not be delivered, and why (audited; a redrive reopens one)."),
    "only this subscription (any state: a disabled one's gone letters too)",
  )
    .addOption(new Option("--resolution <r>", "the decision").choices([...RESOLUTIONS]))
    .option("--reason <text>", "why: a sentence and an incident or ticket id (required unless --dry-run)")
    .option("--dry-run", "print the count and a sample; change nothing", false)
    .addHelpText(
      "after",
      '\nExamples:\n  hookledger resolve --subscription sub_westfield --dead-letter-reason gone --resolution discarded --dry-run\n  hookledger resolve --subscription sub_westfield --dead-letter-reason gone --resolution discarded --reason "Westfield decommissioned, INC-2240"',
    )
    .action(async (opts: Opts) => {
      if (!opts.dryRun && !opts.resolution) {
        console.error(`hookledger resolve: --resolution is required: one of ${RESOLUTIONS.join(", ")}. Use --dry-run to preview.`);
        process.exit(2);
      }
      if (!opts.dryRun && !opts.reason?.trim()) {
        console.error(
          'hookledger resolve: --reason is required: say why these will never be delivered (e.g. --reason "Westfield decommissioned, INC-2240"). Use --dry-run to preview.',
        );
        process.exit(2);
      }
      const filter = dlqFilterFrom(opts);
      process.exit(await withDatabase((url) => runResolve(url, opts, filter)));
    });
}

async function runResolve(url: string, opts: Opts, filter: Record<string, unknown>): Promise<number> {
  const { createPrisma } = await import("../lib/db/prisma");
  const { AppError } = await import("../lib/errors");
  const { ZBulkResolve } = await import("../lib/resolve/resolve-input");
  const { previewResolve, resolveDeadLetters } = await import("../lib/resolve/resolve-and-resend");
  const prisma = createPrisma(url);
  try {
    const parsed = ZBulkResolve.safeParse({ filter, resolution: opts.resolution ?? "discarded", reason: opts.reason?.trim(), dryRun: opts.dryRun });
    if (!parsed.success) {
      console.error(`hookledger resolve: ${parsed.error.issues[0].path.join(".")}: ${parsed.error.issues[0].message}`);
      return 2;
    }
    const preview = await previewResolve(prisma, { filter: parsed.data.filter });
    console.log(`Matched ${num(preview.matched)} dead-lettered ${noun(preview.matched, "delivery", "deliveries")}.`);
    if (preview.matched > 0) console.log(`  dead-lettered between ${preview.oldestDeadLetteredAt} and ${preview.newestDeadLetteredAt}; oldest first:`);
    for (const s of preview.sample) console.log(`  ${s.id}  ${s.subscriptionId}  ${s.eventId}  ${s.deadLetterReason ?? "-"}  ${s.lastStatusCode ?? "-"}`);
    printMore(preview.matched, preview.sample.length);
    if (opts.dryRun) {
      console.log("Dry run: nothing changed.");
      return 0;
    }
    if (preview.matched === 0) {
      console.log("Nothing to resolve.");
      return 0;
    }
    const principal = cliPrincipal();
    const t0 = Date.now();
    const r = await resolveDeadLetters(prisma, { filter: parsed.data.filter, resolution: parsed.data.resolution, reason: parsed.data.reason! }, principal);
    console.log(
      `Resolved ${r.resolved} as ${r.resolution} in ${((Date.now() - t0) / 1000).toFixed(1)} s (${r.id}), by ${principal.actor}, reason "${parsed.data.reason}".`,
    );
    return 0;
  } catch (err) {
    if (err instanceof AppError) {
      console.error(`hookledger resolve: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await prisma.$disconnect();
  }
}

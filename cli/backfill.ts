// `hookledger backfill`: deliveries for a subscription's past events (those
// received in a window that it receives and has none for yet), created and
// sent as a paced, audited, cancellable batch (kind backfill). Prints the
// count and a sample first; with --dry-run stops there. Running it again over
// the same window finds nothing left to create.
import type { Command } from "commander";
import { cliPrincipal } from "./options";
import { withDatabase } from "./db";
import { addWindowOptions, reasonGiven, type WindowOpts } from "./recover";
import { followBatch, printMore } from "./follow-batch";
import { count } from "../lib/words";

export function registerBackfillCommand(program: Command) {
  addWindowOptions(
    program.command("backfill").description("Create and send deliveries for a subscription's past events that it has none for, as a paced, audited, cancellable batch."),
  )
    .addHelpText(
      "after",
      "\nExamples:\n  hookledger backfill --subscription sub_westfield --since 7d --reason ONBOARD-88 --dry-run\n  hookledger backfill --subscription sub_westfield --since 7d --reason ONBOARD-88 --rate 100",
    )
    .action(async (opts: WindowOpts) => {
      if (!reasonGiven("backfill", opts)) process.exit(2);
      const body = { since: opts.since, ...(opts.until ? { until: opts.until } : {}), reason: opts.reason, ratePerSecond: opts.rate, dryRun: opts.dryRun };
      process.exit(await withDatabase((url) => runBackfill(url, opts, body)));
    });
}

async function runBackfill(url: string, opts: WindowOpts, body: Record<string, unknown>): Promise<number> {
  const { createPrisma } = await import("../lib/db/prisma");
  const { AppError } = await import("../lib/errors");
  const { ZBackfill } = await import("../lib/redrive/redrive-input");
  const { previewBackfill, createBackfillBatch } = await import("../lib/recover/recover-and-backfill");
  const prisma = createPrisma(url);
  try {
    const parsed = ZBackfill.safeParse(body);
    if (!parsed.success) {
      const i = parsed.error.issues[0];
      console.error(`hookledger backfill: ${i.path.length ? `${i.path.join(".")}: ` : ""}${i.message}`);
      return 2;
    }
    const preview = await previewBackfill(prisma, opts.subscription, parsed.data);
    console.log(`${count(preview.matched, "event")} received between ${preview.since} and ${preview.until} match ${preview.subscriptionId} and have no delivery for it.`);
    for (const s of preview.sample) console.log(`  ${s.eventId}  ${s.eventType}  received ${s.receivedAt}`);
    printMore(preview.matched, preview.sample.length);
    if (opts.dryRun) {
      console.log("Dry run: nothing changed.");
      return 0;
    }
    if (preview.matched === 0) {
      console.log("Nothing to backfill.");
      return 0;
    }
    const principal = cliPrincipal();
    const batch = await createBackfillBatch(prisma, opts.subscription, { ...parsed.data, reason: parsed.data.reason! }, principal);
    return await followBatch(url, prisma, batch, principal.actor, opts.detach, { kind: true, verb: "created", failed: "failed" });
  } catch (err) {
    if (err instanceof AppError) {
      console.error(`hookledger backfill: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await prisma.$disconnect();
  }
}

// `hookledger redrive`: a bulk redrive from the terminal. Prints the matched
// count (and a sample) first; with --dry-run stops there. Otherwise creates the
// batch (audited as the CLI user), then follows its progress until done. The
// batch is persisted: Ctrl-C stops following, not the batch, which the
// workers' pacers go on draining.
import os from "node:os";
import { InvalidArgumentError, Option, type Command } from "commander";
import type { Principal } from "../auth/principal";
import { withDatabase } from "./db";
import { DEFAULT_RATE_PER_SECOND, MAX_RATE_PER_SECOND } from "../redrive/schema";

type Opts = {
  subscription?: string;
  reason?: string;
  deadLetterReason?: string;
  errorClass?: string;
  status?: number;
  since?: string;
  until?: string;
  rate: number;
  latestStateWins: boolean;
  dryRun: boolean;
  detach: boolean;
};

/** An ISO time, or an age such as 30m, 6h, 2d (that long ago). */
export function parseWhen(flag: string) {
  return (v: string): string => {
    const rel = v.match(/^(\d+)\s*([smhd])$/);
    if (rel) {
      const unit = { s: 1, m: 60, h: 3600, d: 86400 }[rel[2] as "s" | "m" | "h" | "d"];
      return new Date(Date.now() - Number(rel[1]) * unit * 1000).toISOString();
    }
    const t = new Date(v);
    if (!/^\d{4}-\d{2}-\d{2}/.test(v) || Number.isNaN(t.getTime()))
      throw new InvalidArgumentError(`${flag} takes an ISO time (2026-11-29T08:00:00Z) or an age such as 30m, 6h, 2d.`);
    return t.toISOString();
  };
}

function intIn(flag: string, min: number, max: number) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`${flag} must be a whole number from ${min} to ${max}.`);
    return n;
  };
}

function cliPrincipal(): Principal {
  let user = "unknown";
  try {
    user = os.userInfo().username;
  } catch {
    /* no passwd entry */
  }
  // Whoever can reach the database can do anything; the audit row says who it was.
  return { kind: "system", id: "cli", role: "admin", actor: `cli:${user}@${os.hostname()}` };
}

export function registerRedriveCommand(program: Command) {
  program
    .command("redrive")
    .description("Redrive dead-lettered deliveries matching a filter, as a paced, audited, cancellable batch.")
    .option("--subscription <id>", "only this subscription")
    .option("--reason <text>", "why: an incident or ticket id (required unless --dry-run)")
    .option("--dead-letter-reason <r>", "only this dead-letter reason: exhausted, permanent, gone, target_blocked")
    .option("--error-class <c>", "only this last error class, e.g. http_4xx, timeout")
    .addOption(new Option("--status <code>", "only this last HTTP status code").argParser(intIn("--status", 100, 599)))
    .addOption(new Option("--since <time>", "dead-lettered at or after (ISO time, or an age: 30m, 6h, 2d)").argParser(parseWhen("--since")))
    .addOption(new Option("--until <time>", "dead-lettered before (ISO time, or an age)").argParser(parseWhen("--until")))
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
      const filter = Object.fromEntries(
        Object.entries({
          subscriptionId: opts.subscription,
          deadLetterReason: opts.deadLetterReason,
          errorClass: opts.errorClass,
          statusCode: opts.status,
          deadLetteredFrom: opts.since,
          deadLetteredTo: opts.until,
        }).filter(([, v]) => v !== undefined),
      );
      const code = await withDatabase((url) => runRedrive(url, opts, filter));
      process.exit(code);
    });
}

async function runRedrive(url: string, opts: Opts, filter: Record<string, unknown>): Promise<number> {
  const { createPrisma } = await import("../db/prisma");
  const { AppError } = await import("../errors");
  const { ZRedriveFilter } = await import("../redrive/schema");
  const { previewRedrive, createRedriveBatch, getRedriveBatch } = await import("../redrive/service");
  const prisma = createPrisma(url);
  try {
    const parsed = ZRedriveFilter.safeParse(filter);
    if (!parsed.success) {
      console.error(`hookledger redrive: ${parsed.error.issues[0].message}`);
      return 2;
    }
    const preview = await previewRedrive(prisma, { filter: parsed.data, latestStateWins: opts.latestStateWins });
    console.log(`Matched ${preview.matched} dead-lettered ${preview.matched === 1 ? "delivery" : "deliveries"}.`);
    if (preview.matched > 0)
      console.log(`  dead-lettered between ${preview.oldestDeadLetteredAt} and ${preview.newestDeadLetteredAt}; oldest first:`);
    for (const s of preview.sample)
      console.log(`  ${s.id}  ${s.subscriptionId}  ${s.eventId}  ${s.deadLetterReason ?? "-"}  ${s.lastErrorClass ?? "-"}  ${s.lastStatusCode ?? "-"}`);
    if (preview.matched > preview.sample.length) console.log(`  … and ${preview.matched - preview.sample.length} more`);
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
    console.log(
      `Batch ${batch.id}: ${batch.matched} at ${batch.ratePerSecond}/s (about ${Math.ceil(batch.matched / batch.ratePerSecond)} s), by ${principal.actor}, reason "${batch.reason}".`,
    );
    if (opts.detach) {
      console.log(`Follow it on /redrives/${batch.id} or GET /api/v1/redrives/${batch.id}.`);
      return 0;
    }

    // Pace it from here too: harmless beside the workers' pacers (they share the
    // batch's budget), and the batch still moves if no worker is running yet.
    const { startRedrivePacer } = await import("../../worker/redrive-pacer");
    const pacer = startRedrivePacer({ databaseUrl: url });
    let interrupted = false;
    const onSigint = () => {
      interrupted = true;
    };
    process.once("SIGINT", onSigint);
    try {
      let last = "";
      for (;;) {
        const p = await getRedriveBatch(prisma, batch.id);
        const line =
          `${p.status.padEnd(9)} redriven ${p.redriven}/${p.matched}, skipped ${p.skipped}, remaining ${p.remaining}` +
          ` | delivered since ${p.deliveredSince}, failed again ${p.failedAgain}`;
        if (line !== last) console.log(line);
        last = line;
        if (p.status !== "running") return p.status === "done" ? 0 : 1;
        if (interrupted) {
          console.log(`Stopped following. Batch ${batch.id} goes on in the workers; cancel it on /redrives/${batch.id} or POST /api/v1/redrives/${batch.id}/cancel.`);
          return 130;
        }
        await new Promise((r) => setTimeout(r, 1000));
      }
    } finally {
      process.removeListener("SIGINT", onSigint);
      await pacer.stop();
    }
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

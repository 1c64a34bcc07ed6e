// `hookledger erase`: erasure on request. Every event whose subject holds the
// key and value given (in one tenant with --tenant) loses its payload, subject
// values and recorded answers; unfinished deliveries are resolved `erased`.
// Prints a receipt (the erasure id, the key, the counts, who, when, why: never
// the value). Bad input exits 2 with the message and changes nothing.
import type { Command } from "commander";
import { withDatabase } from "./db";
import { cliPrincipal } from "./options";

type Opts = { subject?: string; tenant?: string; reason?: string; dryRun: boolean };

/** `key=value` as the API's subject object; null when there is no `=`. */
export function parseSubjectFlag(s: string): Record<string, string> | null {
  const eq = s.indexOf("=");
  if (eq < 0) return null;
  return { [s.slice(0, eq).trim()]: s.slice(eq + 1) };
}

export function registerEraseCommand(program: Command) {
  program
    .command("erase")
    .description("Erase a subject on request (e.g. a student's records): payloads, subject values and recorded answers of its events; a receipt without the value.")
    .option("--subject <key=value>", "the searchable subject key and value to erase, e.g. studentId=stu_881")
    .option("--tenant <tenant>", "only this tenant's events")
    .option("--reason <text>", "why: the request it answers, e.g. 'records request 2291' (never the value itself)")
    .option("--dry-run", "print the counts; change nothing", false)
    .addHelpText(
      "after",
      '\nExamples:\n  hookledger erase --subject studentId=stu_881 --tenant lincoln --reason "records request 2291" --dry-run\n  hookledger erase --subject studentId=stu_881 --reason "records request 2291"',
    )
    .action(async (opts: Opts) => {
      if (!opts.subject) fail("--subject is required: the key and value to erase, e.g. --subject studentId=stu_881");
      const subject = parseSubjectFlag(opts.subject);
      if (!subject) fail(`--subject must be key=value, e.g. studentId=stu_881 (got ${JSON.stringify(opts.subject)})`);
      const { ZCreateErasure } = await import("../lib/erasure/erasure-input");
      const parsed = ZCreateErasure.safeParse({ subject, tenant: opts.tenant, reason: opts.reason, dryRun: opts.dryRun });
      if (!parsed.success) {
        const i = parsed.error.issues[0];
        fail(`${flagOf(i.path)}: ${i.message}`);
      }
      process.exit(await withDatabase((url) => runErase(url, parsed.data)));
    });
}

function fail(message: string): never {
  console.error(`hookledger erase: ${message}`);
  process.exit(2);
}

/** The flag a schema path came from: subject.studentId -> --subject, reason -> --reason. */
function flagOf(path: PropertyKey[]): string {
  const top = String(path[0] ?? "subject");
  return top === "dryRun" ? "--dry-run" : `--${top}`;
}

async function runErase(url: string, input: { subject: Record<string, string | number>; tenant?: string; reason: string; dryRun: boolean }): Promise<number> {
  const { createPrisma } = await import("../lib/db/prisma");
  const { AppError } = await import("../lib/errors");
  const { createErasure } = await import("../lib/erasure/create-erasure");
  const prisma = createPrisma(url);
  try {
    const r = await createErasure(prisma, input, cliPrincipal());
    const scope = r.tenant ? ` in tenant ${r.tenant}` : " in every tenant";
    if (r.dryRun) {
      console.log(`Dry run: an erasure of ${r.subjectKey}${scope} would erase ${r.events} events (and ${r.opsEvents} operational events about them),`);
      console.log(`  scrub ${r.deliveries} deliveries and ${r.attempts} recorded answers, and resolve ${r.resolved} unfinished deliveries as erased;`);
      console.log(`  take the value out of ${r.reasonsScrubbed} operators' reasons; ${r.eventIdsWithValue} of the event ids contain it (an id cannot be erased).`);
      console.log("Dry run: nothing changed.");
      return 0;
    }
    console.log(`Erasure ${r.id} finished in ${(r.durationMs / 1000).toFixed(1)} s.`);
    console.log(`  subject key   ${r.subjectKey} (the value is not kept; a keyed MAC of it refuses later reasons that name it)`);
    console.log(`  tenant        ${r.tenant ?? "every tenant"}`);
    console.log(`  events        ${r.events} erased, and ${r.opsEvents} operational events about them`);
    console.log(`  deliveries    ${r.deliveries} scrubbed, ${r.resolved} unfinished resolved as erased`);
    console.log(`  answers       ${r.attempts} recorded attempt answers removed`);
    console.log(`  reasons       ${r.reasonsScrubbed} operators' reasons and resolution texts scrubbed of the value`);
    console.log(`  event ids     ${r.eventIdsWithValue} of the erased events' ids contain the value; an id cannot be erased (it is the delivery's identity)`);
    console.log(`  when          ${r.startedAt} to ${r.finishedAt}`);
    console.log(`  by            ${r.by}`);
    console.log(`  why           ${r.reason}`);
    return 0;
  } catch (err) {
    if (err instanceof AppError) {
      console.error(`hookledger erase: ${err.message}`);
      return err.status === 400 ? 2 : 1;
    }
    throw err;
  } finally {
    await prisma.$disconnect();
  }
}

// Options and parsers shared by the CLI's commands, so a flag means the same
// thing (and fails with the same message) in every command that takes it.
import os from "node:os";
import { InvalidArgumentError, Option, type Command } from "commander";
import type { Principal } from "../lib/auth/principal";
import { DEAD_LETTER_REASON_LIST, ERROR_CLASSES } from "../lib/ledger/states";

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

/** A whole number in [min, max], or a usage error naming the flag. */
export function intIn(flag: string, min: number, max: number) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`${flag} must be a whole number from ${min} to ${max}.`);
    return n;
  };
}

/** The CLI acts as a system admin; the audit rows name the OS user and host it ran as. */
export function cliPrincipal(): Principal {
  let user = "unknown";
  try {
    user = os.userInfo().username;
  } catch {
    /* no passwd entry */
  }
  // Whoever can reach the database can do anything; the audit row says who it was.
  return { kind: "system", id: "cli", role: "admin", actor: `cli:${user}@${os.hostname()}` };
}

export type DlqFilterOpts = { subscription?: string; deadLetterReason?: string; errorClass?: string; status?: number; since?: string; until?: string };

/** The dead-letter filter flags of `redrive` and `resolve`. */
export function addDlqFilterOptions(cmd: Command, subscriptionHelp = "only this subscription"): Command {
  return cmd
    .option("--subscription <id>", subscriptionHelp)
    .addOption(new Option("--dead-letter-reason <r>", "only this dead-letter reason").choices(DEAD_LETTER_REASON_LIST))
    .addOption(new Option("--error-class <c>", "only this last error class").choices(ERROR_CLASSES))
    .addOption(new Option("--status <code>", "only this last HTTP status code").argParser(intIn("--status", 100, 599)))
    .addOption(new Option("--since <time>", "dead-lettered at or after (ISO time, or an age: 30m, 6h, 2d)").argParser(parseWhen("--since")))
    .addOption(new Option("--until <time>", "dead-lettered before (ISO time, or an age)").argParser(parseWhen("--until")));
}

/** The API's DLQ filter from those flags (only the ones given). */
export function dlqFilterFrom(opts: DlqFilterOpts): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries({
      subscriptionId: opts.subscription,
      deadLetterReason: opts.deadLetterReason,
      errorClass: opts.errorClass,
      statusCode: opts.status,
      deadLetteredFrom: opts.since,
      deadLetteredTo: opts.until,
    }).filter(([, v]) => v !== undefined),
  );
}

/**
 * A refusal the operator can fix, said as "hookledger <command>: …" on stderr, and the command exits 2 (docs/API.md,
 * the CLI's exit codes): an AppError, or, when `flags` names the command's flags, a ZodError (its message names them).
 * Anything else is thrown on: a crash, exit 1.
 */
export async function exitOnRefusal(command: string, err: unknown, flags?: string): Promise<void> {
  const { AppError, fromZod } = await import("../lib/errors");
  const { ZodError } = await import("zod");
  const e = flags !== undefined && err instanceof ZodError ? fromZod(err, flags) : err;
  if (!(e instanceof AppError)) throw err;
  console.error(`hookledger ${command}: ${e.message}`);
  process.exitCode = 2;
}

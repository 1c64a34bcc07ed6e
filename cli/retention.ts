// `hookledger retention`: what the ledger keeps and for how long.
//   retention show                                    the policy, the oldest data kept, the last runs, the tables' sizes
//   retention run [--dry-run]                         remove expired finished work now (or print what would go)
//   retention set --tenant T --days N [--payload-days M]   a tenant's override (--clear removes it)
// Bad input (days below 1, absurd or not a number, an unknown tenant, a
// malformed HOOKLEDGER_RETENTION_DAYS) exits 2 with the message and changes nothing.
import type { Command } from "commander";
import { withDatabase } from "./db";
import { cliPrincipal } from "./options";

function fail(message: string): never {
  console.error(`hookledger retention: ${message}`);
  process.exit(2);
}

/** The environment's policy, or exit 2 naming the variable. */
async function checkEnv(): Promise<void> {
  const { retentionFromEnv } = await import("../lib/retention/policy");
  try {
    retentionFromEnv();
  } catch (err) {
    fail((err as Error).message);
  }
}

/** A flag's whole number of days, as the API's schema would judge it; exit 2 otherwise. */
function days(flag: string, v: string): number {
  if (!/^-?\d+$/.test(v.trim())) fail(`${flag} must be a whole number of days from 1 to 36500 (got ${JSON.stringify(v)})`);
  return Number(v);
}

/** A use case's own refusal (an AppError): its message, exit 2 for bad input and 1 otherwise; anything else is thrown. */
async function reported(run: () => Promise<number>): Promise<number> {
  const { AppError } = await import("../lib/errors");
  try {
    return await run();
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    console.error(`hookledger retention: ${err.message}`);
    return err.status === 400 ? 2 : 1;
  }
}

const fmtDays = (d: number | null) => (d === null ? "kept as long as the delivery" : `${d} days`);

function printPolicy(p: {
  retentionDays: number;
  payloadRetentionDays: number | null;
  overrides: { tenant: string; retentionDays: number; payloadRetentionDays: number | null }[];
}) {
  console.log(`Policy: finished deliveries kept ${p.retentionDays} days; payloads ${fmtDays(p.payloadRetentionDays)}.`);
  for (const o of p.overrides) console.log(`  tenant ${o.tenant}: ${o.retentionDays} days; payloads ${fmtDays(o.payloadRetentionDays)}`);
}

export function registerRetentionCommand(program: Command) {
  const cmd = program.command("retention").description("What the ledger keeps and for how long: the policy, runs, per-tenant overrides.");

  cmd
    .command("run")
    .description("Remove finished deliveries, their attempts and unneeded events older than the policy, and expunge old payloads, now.")
    .option("--dry-run", "print what would be removed and expunged; change nothing", false)
    .action(async (opts: { dryRun: boolean }) => {
      await checkEnv();
      process.exit(
        await withDatabase(async (url) => {
          const { createPrisma } = await import("../lib/db/prisma");
          const { createPool } = await import("../lib/db/pool");
          const { runRetention } = await import("../lib/retention/run-retention");
          const prisma = createPrisma(url);
          const pool = createPool({ url, max: 3 });
          try {
            return await reported(async () => {
              const r = (await runRetention(pool, prisma, { dryRun: opts.dryRun, trigger: "manual", actor: cliPrincipal().actor }))!;
              printPolicy(r.policy);
              const what = `${r.deliveries} finished deliveries with ${r.attempts} attempts, ${r.events} events${r.partitions ? `, ${r.partitions} whole months` : ""}; ${r.expunged} payloads expunged`;
              if (r.dryRun) {
                console.log(`Dry run: a run now would remove ${what}.`);
                console.log("Dry run: nothing changed.");
                return 0;
              }
              console.log(`Retention run ${r.id} finished in ${(r.durationMs / 1000).toFixed(1)} s: removed ${what}.`);
              console.log(`  by ${r.by}, ${r.startedAt} to ${r.finishedAt}`);
              return 0;
            });
          } finally {
            await pool.end();
            await prisma.$disconnect();
          }
        }),
      );
    });

  cmd
    .command("show")
    .description("The policy, the oldest data kept, the last runs and the ledger tables' sizes.")
    .action(async () => {
      await checkEnv();
      await withDatabase(async (url) => {
        const { createPool } = await import("../lib/db/pool");
        const { getRetentionOverview } = await import("../lib/retention/run-retention");
        const pool = createPool({ url, max: 3 });
        try {
          const o = await getRetentionOverview(pool);
          printPolicy(o.policy);
          console.log(`Oldest kept: event ${o.oldest.event ?? "none"}, finished delivery ${o.oldest.finishedDelivery ?? "none"}, attempt ${o.oldest.attempt ?? "none"}`);
          for (const t of o.tables)
            console.log(`  ${t.name.padEnd(11)} ${t.rows === null ? "rows not yet counted" : `~${t.rows} rows`}, ${(t.bytes / 1024 / 1024).toFixed(1)} MB`);
          for (const p of o.partitions)
            console.log(
              `  ${p.name.padEnd(24)} ${p.from ?? ""}..${p.to ?? ""} ${p.rows === null ? "rows not yet counted" : `~${p.rows} rows`}, ${(p.bytes / 1024 / 1024).toFixed(1)} MB`,
            );
          if (o.runs.length === 0) console.log("No runs yet.");
          for (const r of o.runs)
            console.log(
              `  ${r.startedAt} ${r.trigger.padEnd(8)} ${r.status.padEnd(8)} by ${r.actor}: ${r.deliveries} deliveries, ${r.attempts} attempts, ${r.events} events removed, ${r.expunged} expunged${r.error ? ` (${r.error})` : ""}`,
            );
        } finally {
          await pool.end();
        }
      });
    });

  cmd
    .command("set")
    .description("Set a tenant's override of the retention days (--clear: remove it, the tenant follows the environment again).")
    .option("--tenant <tenant>", "the tenant id")
    .option("--days <n>", "finished deliveries of this tenant's events are kept n days")
    .option("--payload-days <n>", "their payloads are expunged after n days (at most --days)")
    .option("--clear", "remove the tenant's override", false)
    .action(async (opts: { tenant?: string; days?: string; payloadDays?: string; clear: boolean }) => {
      if (!opts.tenant) fail("--tenant is required: the tenant id the override is for");
      if (opts.clear && (opts.days || opts.payloadDays)) fail("--clear removes the override; leave out --days and --payload-days");
      if (!opts.clear && !opts.days) fail("--days is required (or --clear to remove the override)");
      const input = {
        tenant: opts.tenant,
        retentionDays: opts.clear ? null : days("--days", opts.days!),
        payloadRetentionDays: opts.payloadDays ? days("--payload-days", opts.payloadDays) : null,
      };
      const { ZRetentionOverride } = await import("../lib/retention/retention-input");
      const parsed = ZRetentionOverride.safeParse(input);
      if (!parsed.success) {
        const i = parsed.error.issues[0];
        fail(`${i.path[0] === "payloadRetentionDays" ? "--payload-days" : i.path[0] === "retentionDays" ? "--days" : "--tenant"}: ${i.message}`);
      }
      await checkEnv();
      process.exit(
        await withDatabase(async (url) => {
          const { createPrisma } = await import("../lib/db/prisma");
          const { setRetentionOverride } = await import("../lib/retention/run-retention");
          const prisma = createPrisma(url);
          try {
            return await reported(async () => {
              const p = await setRetentionOverride(prisma, input, cliPrincipal());
              const o = p.overrides.find((x) => x.tenant === input.tenant);
              console.log(
                o
                  ? `Tenant ${o.tenant}: finished deliveries kept ${o.retentionDays} days; payloads ${fmtDays(o.payloadRetentionDays)}.`
                  : `Tenant ${input.tenant} follows the environment again: ${p.retentionDays} days; payloads ${fmtDays(p.payloadRetentionDays)}.`,
              );
              return 0;
            });
          } finally {
            await prisma.$disconnect();
          }
        }),
      );
    });
}

// `hookledger dlq`: DLQ depth, oldest age, and depth by subscription and reason.
import type { Command } from "commander";
import { withDatabase } from "./db";

export function registerDlqCommand(program: Command) {
  program
    .command("dlq")
    .description("Show the dead-letter queue: depth, oldest age, and depth by subscription and reason.")
    .option("--json", "print JSON instead of a table", false)
    .action(async (opts: { json: boolean }) => {
      await withDatabase(async (url) => {
        const { createPool } = await import("../lib/db/pool");
        const { findDlqSummary, formatAge, renderTable } = await import("../lib/redrive/dead-letter-summary");
        const pool = createPool({ url, max: 1, statementTimeoutMs: 10_000 });
        try {
          const s = await findDlqSummary(pool);
          if (opts.json) return console.log(JSON.stringify(s, null, 2));
          console.log(`DLQ depth: ${s.depth}   oldest: ${formatAge(s.oldestAgeSeconds)}`);
          if (s.depth === 0) return console.log("The dead-letter queue is empty.");
          console.log("");
          console.log(
            renderTable(
              ["SUBSCRIPTION", "NAME", "STATE", "REASON", "DEPTH", "OLDEST"],
              s.groups.map((g) => [g.subscriptionId, g.name, g.subscriptionState, g.reason ?? "-", g.depth, formatAge(g.oldestAgeSeconds)]),
            ),
          );
          console.log("");
          console.log("Redrive a group: hookledger redrive --subscription <id> --dead-letter-reason <reason> --reason <ticket> [--rate N] [--dry-run]");
        } finally {
          await pool.end();
        }
      });
    });
}

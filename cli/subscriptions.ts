// `hookledger subscriptions list`: the subscriptions as rows, searched and
// ordered as GET /api/v1/subscriptions does (lib/subscriptions/list.ts), read
// page after page so ten thousand of them are never one statement's answer.
import { Option, type Command } from "commander";
import { withDatabase } from "./db";
import { exitOnRefusal, intIn } from "./options";
import { SUBSCRIPTION_PAGE_MAX, SUBSCRIPTION_SORTS } from "../lib/subscriptions/subscription-input";
import { count } from "../lib/words";

type ListOpts = {
  q?: string;
  tenant?: string;
  state?: "active" | "paused" | "disabled";
  archived: boolean;
  sort: (typeof SUBSCRIPTION_SORTS)[number];
  limit?: number;
  json: boolean;
};

export function registerSubscriptionsCommands(program: Command) {
  const subs = program.command("subscriptions").description("Subscriptions (endpoints).");
  subs
    .command("list")
    .description("List subscriptions: all of them, or those matching --q (name, id, URL or tenant), --tenant, --state.")
    .option("--q <text>", "only those whose name, id, URL or tenant contains this (any case)")
    .option("--tenant <id>", "only this tenant's")
    .addOption(new Option("--state <state>", "only those in this state").choices(["active", "paused", "disabled"]))
    .option("--archived", "archived ones too", false)
    .addOption(new Option("--sort <order>", "order; a leading - reverses").choices([...SUBSCRIPTION_SORTS]).default("name"))
    .addOption(new Option("--limit <n>", "print at most n (default: every one)").argParser(intIn("--limit", 1, 10_000_000)))
    .option("--json", "one JSON object per line instead of a table", false)
    .action(async (opts: ListOpts) => {
      await withDatabase(async (url) => {
        const { createPool } = await import("../lib/db/pool");
        const { findSubscriptionPage } = await import("../lib/subscriptions/list");
        const { renderTable } = await import("../lib/redrive/dead-letter-summary");
        // The URL as the dashboard and the API show it, a credential in it masked: what a terminal prints is copied into tickets.
        const { displayUrl } = await import("../lib/display-url");
        const pool = createPool({ url, max: 1, statementTimeoutMs: 10_000 });
        const rows: (string | number)[][] = [];
        let printed = 0;
        try {
          let cursor: string | undefined;
          do {
            const want = opts.limit === undefined ? SUBSCRIPTION_PAGE_MAX : Math.min(SUBSCRIPTION_PAGE_MAX, opts.limit - printed);
            const page = await findSubscriptionPage(pool, {
              q: opts.q,
              tenant: opts.tenant,
              state: opts.state,
              archived: opts.archived ? "true" : undefined,
              sort: opts.sort,
              cursor,
              limit: want,
            });
            for (const s of page.items) {
              if (opts.json)
                console.log(
                  JSON.stringify({ id: s.id, name: s.name, tenant: s.tenant, url: displayUrl(s.url), state: s.state, archivedAt: s.archived_at?.toISOString() ?? null }),
                );
              else rows.push([s.id, s.name, s.tenant ?? "-", s.archived_at ? "archived" : s.state, displayUrl(s.url)]);
            }
            printed += page.items.length;
            cursor = page.nextCursor ?? undefined;
          } while (cursor && (opts.limit === undefined || printed < opts.limit));
          if (opts.json) return;
          if (rows.length === 0) return console.log("No subscriptions match.");
          console.log(renderTable(["ID", "NAME", "TENANT", "STATE", "URL"], rows));
          console.log(`\n${count(rows.length, "subscription")}${cursor ? ` (more match; --limit ${opts.limit} stopped here)` : ""}.`);
        } catch (err) {
          await exitOnRefusal("subscriptions list", err, "flags");
        } finally {
          await pool.end();
        }
      });
    });
}

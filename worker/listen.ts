// LISTEN for new work on its own connection, reconnecting with backoff when it
// drops. The claim loop polls anyway; a notification only wakes it sooner, and
// after a reconnect it is woken once since notifications may have been missed.
import pg from "pg";
import type { Logger } from "pino";
import { DELIVERIES_CHANNEL } from "../lib/ledger/notify";
import { FREEZE_CHANNEL } from "../lib/ledger/sql/freeze";
import { dbBackoff } from "../lib/db/wait";
import { sleep } from "./wakeup";

export class WorkListener {
  private client: pg.Client | null = null;

  constructor(
    private readonly o: {
      databaseUrl: string;
      log: Logger;
      onNotify: () => void;
      /** A partition freeze begun, counted or ended (lib/ledger/sql/freeze.ts), or possibly missed while disconnected. */
      onFreeze: () => void;
      stopping: () => boolean;
    },
  ) {}

  /** Runs until the worker is stopping. */
  async run(): Promise<void> {
    let failures = 0;
    while (!this.o.stopping()) {
      const client = new pg.Client({ connectionString: this.o.databaseUrl, application_name: "hookledger-worker-listen" });
      const ended = new Promise<void>((resolve) => {
        client.on("error", (err) => {
          this.o.log.warn({ err: err.message }, "LISTEN connection lost; reconnecting");
          resolve();
        });
        client.on("end", () => resolve());
      });
      try {
        await client.connect();
        client.on("notification", (n) => (n.channel === FREEZE_CHANNEL ? this.o.onFreeze() : this.o.onNotify()));
        await client.query(`LISTEN ${DELIVERIES_CHANNEL}; LISTEN ${FREEZE_CHANNEL}`);
        this.client = client;
        failures = 0;
        // Notifications may have been missed while disconnected.
        this.o.onFreeze();
        this.o.onNotify();
        await ended;
      } catch (err) {
        this.o.log.warn({ err: (err as Error).message }, "could not LISTEN; polling meanwhile");
      }
      this.client = null;
      await client.end().catch(() => {});
      if (this.o.stopping()) break;
      await sleep(dbBackoff(failures++));
    }
  }

  /** Ends the current connection (once the worker is stopping, run() then returns). */
  async close(): Promise<void> {
    const c = this.client;
    this.client = null;
    await c?.end().catch(() => {});
  }
}

// A PostgreSQL of the run's own (embedded, in a temporary folder), so the
// suite can stop and start it under the workers. The restart keeps the port:
// workers hold the same DATABASE_URL and must find the server again by
// themselves.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startEmbedded } from "../lib/db/embedded";

export class ChaosPostgres {
  readonly dir: string;
  url = "";
  private stopFn: (() => Promise<void>) | null = null;

  constructor(dir?: string) {
    this.dir = dir ?? fs.mkdtempSync(path.join(os.tmpdir(), "hookledger-chaos-"));
    // As root the server runs as `postgres`, which must reach the folder.
    if (process.getuid?.() === 0) fs.chmodSync(this.dir, 0o755);
  }

  get running() {
    return this.stopFn !== null;
  }

  async start(): Promise<string> {
    const pg = await startEmbedded({ dir: this.dir });
    if (!pg.owned) throw new Error(`An embedded PostgreSQL was already running on ${this.dir}; the chaos run needs its own.`);
    if (this.url && pg.url !== this.url)
      throw new Error(`PostgreSQL came back on another address (${new URL(pg.url).port} instead of ${new URL(this.url).port}); its port was taken while it was down.`);
    this.url = pg.url;
    this.stopFn = pg.stop;
    return this.url;
  }

  /** Fast shutdown (SIGINT): open transactions roll back, every connection is cut. */
  async stop() {
    const s = this.stopFn;
    this.stopFn = null;
    await s?.();
  }

  /** Stops, stays down for `downMs`, starts again on the same port. Returns when it accepts connections. */
  async restart(downMs: number): Promise<{ stoppedAt: number; startedAt: number }> {
    await this.stop();
    const stoppedAt = Date.now();
    await new Promise((r) => setTimeout(r, downMs));
    await this.start();
    return { stoppedAt, startedAt: Date.now() };
  }

  async destroy() {
    await this.stop().catch(() => {});
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

// A batch's redrive, recover or backfill from the terminal, after the preview:
// the "… and N more" line under a preview's sample, and following a created
// batch (its progress until it ends; Ctrl-C stops following, not the batch).
// Shared by `hookledger redrive`, `recover`, `backfill` (and `resolve` for the
// preview line).

/** The words of the progress lines: the batch's kind in its header or not, what its items became, how failures are named. */
export type FollowText = { kind?: boolean; verb: string; failed: string };

/** Under a preview's sample: how many matched but are not shown. */
export function printMore(matched: number, shown: number): void {
  if (matched > shown) console.log(`  … and ${matched - shown} more`);
}

/** Prints the batch, then (unless detached) paces it from here too and prints its progress until it ends. */
export async function followBatch(
  url: string,
  prisma: import("../lib/db/prisma").PrismaClient,
  batch: import("../lib/redrive/redrive-batches").RedriveBatchView,
  actor: string,
  detach: boolean,
  text: FollowText,
): Promise<number> {
  const { getRedriveBatch } = await import("../lib/redrive/redrive-batches");
  // The batch's page's words (no React in them), so the terminal and the page say the same.
  const { batchStatusText, stillOnTheirWay } = await import("../components/redrive/batch-kind");
  console.log(
    `Batch ${batch.id}${text.kind ? ` (${batch.kind})` : ""}: ${batch.matched} at ${batch.ratePerSecond}/s (about ${Math.ceil(batch.matched / batch.ratePerSecond)} s), by ${actor}, reason "${batch.reason}".`,
  );
  if (detach) {
    console.log(`Follow it on /redrives/${batch.id} or GET /api/v1/redrives/${batch.id}.`);
    return 0;
  }
  // Pace it from here too: harmless beside the workers' pacers (they share the
  // batch's budget), and the batch still moves if no worker is running yet.
  const { startRedrivePacer } = await import("../worker/redrive-pacer");
  const { logger } = await import("../lib/log");
  // Its log lines would land among the progress lines: only what goes wrong.
  const pacer = startRedrivePacer({ databaseUrl: url, log: logger.child({}, { level: "warn" }) });
  let interrupted = false;
  const onSigint = () => {
    // A second Ctrl-C is "now": the batch goes on in the workers either way.
    if (interrupted) process.exit(130);
    interrupted = true;
  };
  // Ctrl-C here stops following and says what became of the batch. The embedded database's exit hook would otherwise
  // end the process at once, silently, and an engineer would take the redrive for stopped; withDatabase still stops a
  // database this process started. Its handlers are back once following ends.
  const others = process.listeners("SIGINT");
  process.removeAllListeners("SIGINT");
  process.on("SIGINT", onSigint);
  try {
    let last = "";
    for (;;) {
      const p = await getRedriveBatch(prisma, batch.id);
      const line =
        `${p.status.padEnd(9)} ${text.verb} ${p.redriven}/${p.matched}, skipped ${p.skipped}, remaining ${p.remaining}` +
        ` | delivered since ${p.deliveredSince}, ${text.failed} ${p.failedAgain}`;
      if (line !== last) console.log(line);
      last = line;
      if (p.status !== "running") {
        // Done or cancelled once the pacer stops moving items, not once they are sent: what it moved may still be queued
        // or waiting for the endpoint's answer, and "done" or "cancelled" alone would say otherwise.
        if (stillOnTheirWay(p)) console.log(`${batchStatusText(p)} (they are sent as usual; follow them on /redrives/${batch.id})`);
        return p.status === "done" ? 0 : 1;
      }
      if (interrupted) {
        console.log(`Stopped following. Batch ${batch.id} goes on in the workers; cancel it on /redrives/${batch.id} or POST /api/v1/redrives/${batch.id}/cancel.`);
        return 130;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  } finally {
    process.removeListener("SIGINT", onSigint);
    for (const l of others) process.on("SIGINT", l);
    await pacer.stop();
  }
}

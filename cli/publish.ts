// `hookledger publish --file events.ndjson`: publishes a file of events (one
// JSON object a line) through the HTTP API in batches, for operators and
// backfills. It goes through the typed client, so it needs a running server
// and a producer token, never the database: the server stays the one writer.
// Several batches are in flight at once (the server groups their events into
// shared commits); a progress line shows events/s and created, duplicate,
// failed. Any failed event makes the exit code 1; each failure is printed with
// its line number.
import fs from "node:fs";
import readline from "node:readline";
import { InvalidArgumentError, Option, type Command } from "commander";
import { HookledgerApiError, HookledgerClient } from "../client/src/index";
import { count } from "../lib/words";

export type PublishFileStats = {
  sent: number;
  created: number;
  duplicate: number;
  failed: number;
  seconds: number;
  /** Set when `signal` stopped the run: the last line read and sent (answered too); nothing after it was sent. */
  stoppedAfterLine?: number;
};

type Line = { line: number; event: unknown };

/** Publishes `file` in batches of `batch`, `concurrency` at once. `report` gets a progress line about once a second. */
async function publishFile(
  client: HookledgerClient,
  opts: { file: string; batch: number; concurrency?: number; url?: string; signal?: AbortSignal },
  out: { progress: (line: string) => void; failure: (line: string) => void },
): Promise<PublishFileStats> {
  const began = Date.now();
  const stats: PublishFileStats = { sent: 0, created: 0, duplicate: 0, failed: 0, seconds: 0 };
  const progressLine = () => {
    stats.seconds = (Date.now() - began) / 1000;
    const rate = stats.seconds > 0 ? Math.round(stats.sent / stats.seconds) : 0;
    return `${count(stats.sent, "event")}, ${rate} events/s: ${stats.created} created, ${stats.duplicate} duplicate, ${stats.failed} failed`;
  };
  const timer = setInterval(() => out.progress(progressLine()), 1000);
  const inFlight = new Set<Promise<void>>();
  const send = async (lines: Line[]) => {
    try {
      // Status only: the progress line counts results, and the deliveries were most of each answer's bytes.
      const r = await client.publishBatch(
        lines.map((l) => l.event),
        { deliveries: false },
      );
      for (const res of r.results) {
        if ("error" in res) {
          stats.failed++;
          out.failure(`line ${lines[res.index].line}${res.id ? ` (${res.id})` : ""}: ${res.error.code}: ${res.error.message}`);
        } else if (res.status === "created") stats.created++;
        else stats.duplicate++;
      }
    } catch (err) {
      // The whole batch was refused (or the server is gone after the client's retries): every event in it failed.
      stats.failed += lines.length;
      const why = err instanceof HookledgerApiError ? `${err.code}: ${err.message}` : unreachable(err, opts.url);
      const where = lines.length === 1 ? `line ${lines[0].line}` : `the ${lines.length} events of lines ${lines[0].line}–${lines[lines.length - 1].line}`;
      out.failure(`${where}: ${why}`);
    }
    stats.sent += lines.length;
  };
  const dispatch = async (lines: Line[]) => {
    const p = send(lines).finally(() => inFlight.delete(p));
    inFlight.add(p);
    if (inFlight.size >= (opts.concurrency ?? 4)) await Promise.race(inFlight);
  };
  try {
    const rl = readline.createInterface({ input: fs.createReadStream(opts.file, "utf8"), crlfDelay: Infinity });
    let pending: Line[] = [];
    let n = 0;
    for await (const text of rl) {
      // Stopped (Ctrl-C): what was read and not yet sent is dropped, so the run ends after whole lines.
      if (opts.signal?.aborted) {
        stats.stoppedAfterLine = n - pending.length;
        pending = [];
        rl.close();
        break;
      }
      n++;
      if (!text.trim()) continue;
      let event: unknown;
      try {
        event = JSON.parse(text);
      } catch (err) {
        stats.failed++;
        stats.sent++;
        out.failure(`line ${n}: not JSON: ${(err as Error).message}`);
        continue;
      }
      pending.push({ line: n, event });
      if (pending.length >= opts.batch) {
        await dispatch(pending);
        pending = [];
      }
    }
    if (pending.length) await dispatch(pending);
    // Batches already sent are answered and counted before the summary, so it says what the server holds.
    await Promise.all(inFlight);
  } finally {
    clearInterval(timer);
  }
  out.progress(progressLine());
  return stats;
}

/** A transport failure in words: fetch says only "fetch failed"; its cause names what happened (ECONNREFUSED…). */
function unreachable(err: unknown, url: string | undefined): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  const cause = e.cause?.code ?? e.cause?.message;
  return `${url ? `could not reach ${url}` : e.message}${cause ? ` (${cause})` : ""}; is hookledger running there? (--url, HOOKLEDGER_URL)`;
}

function serverUrl(v: string): string {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new InvalidArgumentError("--url must be the server's address, such as http://localhost:3000.");
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new InvalidArgumentError("--url must be an http:// or https:// address.");
  return v;
}

function batchSize(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 500) throw new InvalidArgumentError("--batch must be a whole number from 1 to 500.");
  return n;
}

export function registerPublishCommand(program: Command) {
  program
    .command("publish")
    .description("Publish events from an NDJSON file (one event a line) through the HTTP API in batches; exits 1 if any event failed.")
    .requiredOption("--file <path>", "the NDJSON file")
    .addOption(new Option("--batch <n>", "events per request (1–500)").default(500).argParser(batchSize))
    // The same default as the dashboard's own port (PORT, else 3000), so a publish run beside `hookledger start` finds it.
    .addOption(
      new Option("--url <url>", "the hookledger server (http://localhost:$PORT when PORT is set)")
        .env("HOOKLEDGER_URL")
        .default(`http://localhost:${process.env.PORT?.trim() || 3000}`)
        .argParser(serverUrl),
    )
    .addOption(new Option("--token <token>", "a producer (or admin) API token").env("HOOKLEDGER_TOKEN"))
    .action(async (opts: { file: string; batch: number; url: string; token?: string }) => {
      if (!opts.token) {
        console.error("hookledger publish: a token is needed: --token or HOOKLEDGER_TOKEN (create one with `npx hookledger token create --role producer`).");
        process.exit(2);
      }
      if (!fs.existsSync(opts.file)) {
        console.error(`hookledger publish: ${opts.file} does not exist.`);
        process.exit(2);
      }
      const client = new HookledgerClient({ baseUrl: opts.url, token: opts.token });
      let failures = 0;
      // Ctrl-C stops reading the file, waits for the batches already sent, and says where it stopped; a second one exits at once.
      const stop = new AbortController();
      const interrupted = () => {
        if (stop.signal.aborted) process.exit(130);
        console.error("Stopping: no more lines are sent; waiting for the answers to the batches already sent (Ctrl-C again to quit now)…");
        stop.abort();
      };
      // publish never opens the database; the embedded database's exit hook (loaded with the CLI) would end the
      // process at once on the signal, silently, before the batches on the way are answered.
      for (const sig of ["SIGINT", "SIGTERM"] as const) {
        process.removeAllListeners(sig);
        process.on(sig, interrupted);
      }
      const stats = await publishFile(
        client,
        { ...opts, signal: stop.signal },
        {
          progress: (line) => process.stderr.write(`${line}\n`),
          failure: (line) => {
            // The first hundred, then only the count: a bad backfill file should not flood the terminal.
            if (++failures <= 100) console.error(line);
            else if (failures === 101) console.error("… more failures; only the count is shown from here.");
          },
        },
      );
      // "Published 4 events … 4 failed" read as a success: with failures, it says how many of them were published.
      const published = stats.failed > 0 ? `${stats.created + stats.duplicate} of ${count(stats.sent, "event")}` : count(stats.sent, "event");
      console.log(
        `Published ${published} in ${stats.seconds.toFixed(1)} s: ${stats.created} created, ${stats.duplicate} duplicate, ${stats.failed} failed${stats.failed > 0 ? " (each failure is listed above)" : ""}.`,
      );
      if (stats.stoppedAfterLine !== undefined) {
        console.log(
          `Stopped after line ${stats.stoppedAfterLine} of ${opts.file}; nothing after it was sent. Run the same command again to carry on: the events already published answer as duplicates.`,
        );
        process.exitCode = 130;
        return;
      }
      process.exitCode = stats.failed > 0 ? 1 : 0;
    });
}

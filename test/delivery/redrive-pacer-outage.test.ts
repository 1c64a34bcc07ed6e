// The redrive pacer while the database is away: it ticks every 200 ms, and each
// failed tick used to log an error with its stack (five a second for as long as
// a restart lasted, burying the lines that matter). It backs off as the claim
// loop does and says once that the database is unavailable. A pool aimed at a
// port nothing listens on gives the ECONNREFUSED of a stopped server.
import { afterEach, describe, expect, it } from "vitest";
import pg from "pg";
import pino from "pino";
import { Writable } from "node:stream";
import { freePort } from "../../lib/db/embedded";
import { startRedrivePacer, type RedrivePacer } from "../../worker/redrive-pacer";

let pacer: RedrivePacer | undefined;
let pool: pg.Pool | undefined;

afterEach(async () => {
  await pacer?.stop();
  await pool?.end().catch(() => {});
});

function capture() {
  const lines: { level: number; msg: string; err?: unknown }[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  return { lines, log: pino({ level: "debug" }, stream) };
}

describe("redrive pacer with the database away", () => {
  it("says so once, without a stack, and backs off instead of failing every 200 ms", async () => {
    pool = new pg.Pool({ connectionString: `postgres://x:y@127.0.0.1:${await freePort()}/z`, connectionTimeoutMillis: 1_000 });
    const { lines, log } = capture();
    pacer = startRedrivePacer({ pool, log, intervalMs: 50 });
    await new Promise((r) => setTimeout(r, 2_500));
    const errors = lines.filter((l) => l.level >= 50);
    const warnings = lines.filter((l) => l.level === 40);
    expect(errors, JSON.stringify(errors.slice(0, 2))).toEqual([]);
    expect(warnings.map((w) => w.msg)).toEqual(["redrive pacer: database unavailable; retrying with backoff"]);
    expect(warnings[0].err).toMatch(/ECONNREFUSED/);
  });
});

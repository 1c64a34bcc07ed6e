// HOOKLEDGER_POSTGRES_BIN makes and runs the embedded database with an installed PostgreSQL's binaries
// (lib/db/embedded.ts): here Debian's PostgreSQL 15, which `npm test` needs anyway (scripts/test-postgres15.sh). A data
// folder opens only with the major that made it, and each refusal says which and what to do.
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { scratchDataDir, startEmbedded } from "../../lib/db/embedded";
import { migrate } from "../../lib/db/migrate";

const PG15_BIN = "/usr/lib/postgresql/15/bin";
const saved = process.env.HOOKLEDGER_POSTGRES_BIN;
let dir: string;

beforeAll(() => {
  if (!fs.existsSync(path.join(PG15_BIN, "postgres")))
    throw new Error(`${PG15_BIN}/postgres is not installed: npm test needs Debian's PostgreSQL 15 (apt-get install postgresql-15; .ci/run does it)`);
  dir = scratchDataDir("hookledger-installed-bin-");
});
afterEach(() => {
  if (saved === undefined) delete process.env.HOOKLEDGER_POSTGRES_BIN;
  else process.env.HOOKLEDGER_POSTGRES_BIN = saved;
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function serverVersionNum(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return Number((await c.query<{ v: string }>("SELECT current_setting('server_version_num') AS v")).rows[0].v);
  } finally {
    await c.end();
  }
}

it("makes the database with that initdb, runs that postgres, migrates, and opens the folder again after a stop", async () => {
  process.env.HOOKLEDGER_POSTGRES_BIN = PG15_BIN;
  const first = await startEmbedded({ dir });
  try {
    expect(first.created).toBe(true);
    expect(first.label).toBe(`PostgreSQL 15 from ${PG15_BIN}`);
    expect(Math.floor((await serverVersionNum(first.url)) / 10_000)).toBe(15);
    await migrate(first.url);
  } finally {
    await first.stop();
  }
  expect(fs.readFileSync(path.join(dir, "postgres", "PG_VERSION"), "utf8").trim()).toBe("15");
  const again = await startEmbedded({ dir });
  try {
    expect(again.created).toBe(false);
    const c = new pg.Client({ connectionString: again.url });
    await c.connect();
    // The migrated schema is still there.
    expect((await c.query("SELECT count(*)::int AS n FROM subscriptions")).rows[0].n).toBe(0);
    await c.end();
  } finally {
    await again.stop();
  }
});

it("refuses to open a PostgreSQL 15 folder with the npm package's 18, saying what to set", async () => {
  delete process.env.HOOKLEDGER_POSTGRES_BIN;
  await expect(startEmbedded({ dir })).rejects.toThrow(
    /was made by PostgreSQL 15, and the embedded PostgreSQL from npm is PostgreSQL 18.*Set HOOKLEDGER_POSTGRES_BIN to PostgreSQL 15's binaries/,
  );
});

it("refuses a folder without PostgreSQL's binaries, and a server older than 15, before writing anything", async () => {
  const empty = scratchDataDir("hookledger-installed-bin-none-");
  const fake = scratchDataDir("hookledger-installed-bin-14-");
  const fresh = scratchDataDir("hookledger-installed-bin-data-");
  try {
    process.env.HOOKLEDGER_POSTGRES_BIN = empty;
    await expect(startEmbedded({ dir: fresh })).rejects.toThrow(/HOOKLEDGER_POSTGRES_BIN=.* has no postgres this process can run/);
    for (const name of ["postgres", "initdb"]) fs.writeFileSync(path.join(fake, name), "#!/bin/sh\necho 'postgres (PostgreSQL) 14.13'\n", { mode: 0o755 });
    process.env.HOOKLEDGER_POSTGRES_BIN = fake;
    await expect(startEmbedded({ dir: fresh })).rejects.toThrow(/is PostgreSQL 14; hookledger needs 15 or newer/);
    expect(fs.existsSync(path.join(fresh, "postgres"))).toBe(false);
  } finally {
    for (const d of [empty, fake, fresh]) fs.rmSync(d, { recursive: true, force: true });
  }
});

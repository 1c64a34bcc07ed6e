// The sign-in page of a fresh install says how to create the first admin. The command it shows names the database
// the running server reads, so pasted in another terminal, in another folder, it makes the admin there: not in a new
// embedded database under that folder's .data, which the dashboard never reads. A real `hookledger start` on a fresh
// embedded PostgreSQL over the existing build, as test/process/start-supervise.test.ts runs it.
import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import pg from "pg";
import { findRunningEmbedded } from "../../lib/db/embedded";
import { groupPids, startHookledger, type Started } from "../helpers/start-process";

const started: Started[] = [];
const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), "hl-elsewhere-"));

afterEach(() => {
  for (const s of started.splice(0)) {
    for (const pid of [...groupPids(s.child.pid!), ...postgresPids(s.dir)])
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        /* gone */
      }
    fs.rmSync(s.dir, { recursive: true, force: true });
  }
  for (const pid of postgresPids(elsewhere))
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      /* gone */
    }
  fs.rmSync(elsewhere, { recursive: true, force: true });
});

/** The postmaster of the embedded server under `dir`. */
function postgresPids(dir: string): number[] {
  return execFileSync("ps", ["-e", "-o", "pid=,args="], { encoding: "utf8" })
    .split("\n")
    .filter((l) => l.includes("postgres") && l.includes(dir))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}

const decode = (html: string) =>
  html
    .replace(/&#x27;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">");

describe("the sign-in page's first-admin command", () => {
  it("names the server's embedded database, so run in another folder it creates the admin the dashboard signs in", { timeout: 300_000 }, async () => {
    const s = await startHookledger(started, { prefix: "hl-first-admin-" });
    const page = await (await fetch(`http://127.0.0.1:${s.port}/signin`)).text();
    expect(page).toContain("No users yet.");
    const shown = decode(page.match(/No users yet\.[\s\S]*?<pre[^>]*>([^<]*)</)![1]).trim();
    expect(shown).toBe(`HOOKLEDGER_DATA_DIR=${s.dir} npx hookledger user create --email you@example.com --role admin`);

    // Pasted into a terminal in another folder (one with the project's migrations, as an install's is), with neither
    // variable set there: `npx hookledger` is this checkout's CLI.
    fs.symlinkSync(path.resolve("prisma"), path.join(elsewhere, "prisma"));
    const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: "warn" };
    delete env.DATABASE_URL;
    delete env.HOOKLEDGER_DATA_DIR;
    const command = shown.replace("npx hookledger", `${JSON.stringify(process.execPath)} ${JSON.stringify(path.resolve("bin/hookledger.mjs"))}`);
    await promisify(execFile)("sh", ["-c", command], { cwd: elsewhere, env, timeout: 120_000 });

    // The admin is in the server's database, and the page asks for no first admin any more.
    const client = new pg.Client({ connectionString: findRunningEmbedded(s.dir)! });
    await client.connect();
    try {
      const { rows } = await client.query("SELECT email, role FROM users");
      expect(rows).toEqual([{ email: "you@example.com", role: "admin" }]);
    } finally {
      await client.end();
    }
    const after = await (await fetch(`http://127.0.0.1:${s.port}/signin`)).text();
    expect(after.includes("No users yet."), "the sign-in page still asks for a first admin").toBe(false);
    expect(fs.existsSync(path.join(elsewhere, ".data"))).toBe(false);
  });
});

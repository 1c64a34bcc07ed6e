// What `hookledger start` puts on the terminal: the first demo run's screen
// is the banner, with the build, the migrations and the database's detail in
// the start-up log (or on the terminal with --verbose), and a failed build or
// migration still prints its error, where the log is, and exits non-zero.
// The start runs are real processes on a fresh embedded PostgreSQL each (so
// every migration is applied), over the existing build, as
// test/helpers/start-process.ts runs them.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, inject, it } from "vitest";
import pg from "pg";
import { killStarted, postgresPids, spawnHookledger, stopAndWaitGone, until, type Started } from "../helpers/start-process";
import { ensureBuilt, openStartLog, START_LOG_MAX_BYTES } from "../../cli/start";

const started: Started[] = [];
afterEach(() => killStarted(started));

/** Not waited for (a failed migration never runs); LOG_LEVEL unset, as on a terminal. */
const startHookledger = (args: string[], env: Record<string, string> = {}) =>
  // HOOKLEDGER_DEMO_PORT=0: the districts and the control page on free ports, beside anyone's demo.
  spawnHookledger(started, { prefix: "hl-quiet-", args, unset: ["LOG_LEVEL"], env: { HOOKLEDGER_DEMO_PORT: "0", ...env } });

const MIGRATION_NAME = /\b00\d\d_[a-z]/;

describe("hookledger start on the terminal", () => {
  it(
    "the first demo run shows the banner on its first screen; the migrations, the database and the dashboard's start-up lines are in the start-up log",
    { timeout: 180_000 },
    async () => {
      const s = await startHookledger(["--demo", "--workers", "0"]);
      await until("the banner's last line", () => /Ctrl-C stops everything.*\n/.test(s.output.join("")), 150_000, s.output);
      const screen = s.output.join("");
      const lines = screen.split("\n");
      const logFile = path.join(s.dir, "logs", "start.log");

      // Within the first few lines, and the whole screen up to the banner's end well inside a 24-line terminal.
      const banner = lines.indexOf("hookledger demo is running.");
      expect(banner, screen).toBeGreaterThan(0);
      expect(banner, screen).toBeLessThan(6);
      expect(
        lines.findIndex((l) => l.startsWith("Ctrl-C stops everything")),
        screen,
      ).toBeLessThan(14);
      // The banner comes last, after start's own line (which leaves the log's name to it).
      const running = lines.findIndex((l) => l.startsWith("hookledger is running: "));
      expect(running, screen).toBeGreaterThanOrEqual(0);
      expect(running, screen).toBeLessThan(banner);
      expect(screen).not.toMatch(/hookledger is running: .*start-up log/);
      // One address for the one dashboard: start's line and the banner name what the demo listens on.
      const url = lines[running].slice("hookledger is running: ".length);
      expect(screen).toContain(`Dashboard:          ${url}\n`);
      expect(screen).toContain(`Start-up log:       ${logFile}`);
      expect(screen).toMatch(/^Starting hookledger and the demo…$/m);
      expect(screen).not.toMatch(MIGRATION_NAME);
      expect(screen).not.toMatch(/Route \(app\)|next\.config|listening on|Embedded PostgreSQL|Demo districts/);

      const log = fs.readFileSync(logFile, "utf8");
      expect(log).toMatch(/Embedded PostgreSQL \d+ started \(data in /);
      expect(log).toMatch(/Applied \d+ migration\(s\):\n {2}0001_init\n/);
      expect(log).toMatch(/dashboard: hookledger dashboard listening on http:\/\/127\.0\.0\.1:\d+/);
      expect(log).toMatch(/Demo districts: lincoln http:\/\/127\.0\.0\.1:\d+\//);

      // Ctrl-C: by the time start exits, it has stopped its database.
      process.kill(-s.child.pid!, "SIGINT");
      expect(await s.exited).toBe(0);
      expect(postgresPids(s.dir)).toEqual([]);
    },
  );

  it("--verbose puts the same detail on the terminal", { timeout: 180_000 }, async () => {
    const s = await startHookledger(["--workers", "0", "--verbose"]);
    await until("running", () => s.output.join("").includes("hookledger is running"), 150_000, s.output);
    const screen = s.output.join("");
    expect(screen).toMatch(/Embedded PostgreSQL \d+ started \(data in /);
    expect(screen).toMatch(/^ {2}0001_init$/m);
    expect(screen).toMatch(/dashboard: hookledger dashboard listening on/);
    expect(screen).toContain(`(start-up log: ${path.join(s.dir, "logs", "start.log")})`);
    expect(fs.readFileSync(path.join(s.dir, "logs", "start.log"), "utf8")).toMatch(/^ {2}0001_init$/m);
    expect(await stopAndWaitGone(s)).toBe(0);
  });

  describe("a migration that fails", () => {
    const adminUrl = inject("adminUrl");
    const name = `hl_quiet_${process.pid}`;
    afterAll(async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    });

    it("prints its error and the start-up log's path, and exits 1", { timeout: 120_000 }, async () => {
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${name}`);
      await admin.end();
      const u = new URL(adminUrl);
      u.pathname = `/${name}`;
      // A table the first migration creates, already there: 0001_init cannot apply.
      const c = new pg.Client({ connectionString: u.toString() });
      await c.connect();
      await c.query("CREATE TABLE events (id int)");
      await c.end();

      const s = await startHookledger(["--workers", "0"], { DATABASE_URL: u.toString(), HOOKLEDGER_SECRET_KEY: randomBytes(32).toString("base64") });
      expect(await s.exited).toBe(1);
      const logFile = path.join(s.dir, "logs", "start.log");
      expect(s.output.join("")).toContain(`hookledger: Migration 0001_init failed: relation "events" already exists (start-up log: ${logFile})`);
      expect(fs.readFileSync(logFile, "utf8")).toMatch(/Migrations failed: Migration 0001_init failed/);
    });
  });
});

describe("the dashboard build", () => {
  /** A project directory without a build, and a command that stands in for `next build`. */
  const roots: string[] = [];
  afterAll(() => roots.forEach((r) => fs.rmSync(r, { recursive: true, force: true })));
  function project(): { root: string; logFile: string; terminal: string[]; build: (script: string) => string[] } {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "hl-build-"));
    roots.push(root);
    return { root, logFile: path.join(root, "logs", "start.log"), terminal: [], build: (script) => [process.execPath, "-e", script] };
  }
  const routeTable = `for (let i = 0; i < 80; i++) console.log("├ ƒ /route-" + i);`;
  const writeBuildId = `require("fs").mkdirSync(".next", { recursive: true }); require("fs").writeFileSync(".next/BUILD_ID", "x");`;

  it("says it is building and that it built, in two lines; the build's output goes to the log only", async () => {
    const p = project();
    const log = openStartLog({ file: p.logFile, terminal: (t) => void p.terminal.push(t) });
    await ensureBuilt(log, { root: p.root, command: p.build(routeTable + writeBuildId) });
    const screen = p.terminal.join("");
    expect(screen).toMatch(/^Building the dashboard \(first run, about a minute\)…\nDashboard built \(\d+ s\)\.\n$/);
    expect(fs.readFileSync(p.logFile, "utf8")).toContain("├ ƒ /route-79\n");

    // Built now: the next start says nothing about it.
    p.terminal.length = 0;
    await ensureBuilt(log, { root: p.root, command: p.build("process.exit(3)") });
    expect(p.terminal).toEqual([]);
  });

  it("--verbose shows the build's output as it comes", async () => {
    const p = project();
    const log = openStartLog({ file: p.logFile, verbose: true, terminal: (t) => void p.terminal.push(t) });
    await ensureBuilt(log, { root: p.root, command: p.build(routeTable + writeBuildId) });
    expect(p.terminal.join("")).toContain("├ ƒ /route-0\n");
    expect(p.terminal.join("")).toContain("├ ƒ /route-79\n");
  });

  it("a failed build prints its whole output and where the log is, and throws", async () => {
    const p = project();
    const log = openStartLog({ file: p.logFile, terminal: (t) => void p.terminal.push(t) });
    const failing = `console.log("Creating an optimized production build ..."); console.error("Error: Turbopack build failed with 1 error:\\n./app/page.tsx:3:7\\nExpression expected"); process.exit(1);`;
    await expect(ensureBuilt(log, { root: p.root, command: p.build(failing) })).rejects.toThrow(
      `next build failed (exit code 1); its output is above and in ${p.logFile}.`,
    );
    const screen = p.terminal.join("");
    expect(screen).toContain("Creating an optimized production build ...\n");
    expect(screen).toContain("Error: Turbopack build failed with 1 error:\n./app/page.tsx:3:7\nExpression expected\n");
    expect(fs.readFileSync(p.logFile, "utf8")).toContain("Expression expected");
  });

  it("the log is appended to, and moved to start.log.1 once it is past its size", () => {
    const p = project();
    openStartLog({ file: p.logFile, terminal: () => {} }).detail("first start");
    openStartLog({ file: p.logFile, terminal: () => {} }).detail("second start");
    expect(fs.readFileSync(p.logFile, "utf8")).toMatch(/first start[\s\S]*second start/);
    fs.appendFileSync(p.logFile, "x".repeat(START_LOG_MAX_BYTES));
    openStartLog({ file: p.logFile, terminal: () => {} }).detail("third start");
    expect(fs.readFileSync(`${p.logFile}.1`, "utf8")).toContain("second start");
    expect(fs.readFileSync(p.logFile, "utf8")).not.toContain("second start");
    expect(fs.readFileSync(p.logFile, "utf8")).toContain("third start");
  });
});

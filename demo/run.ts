// The demo stack (`npm run demo` = `hookledger start --demo`): simulated school
// districts on 127.0.0.1, subscriptions pointing at them, a demo admin, a
// traffic generator and the simulator control page. `hookledger start` has
// already started the database, migrations, dashboard and workers; this adds
// everything that pretends to be the outside world, and stops it on stop().
//
// Re-running with the same data directory carries on: subscriptions are
// upserted (a moved port updates the URL), district state (what each applied,
// its fix switch) is reloaded from <data dir>/demo/districts.json, and event ids
// carry a per-run id.
import fs from "node:fs";
import path from "node:path";
import type pg from "pg";
import { createPrisma, type PrismaClient } from "../lib/db/prisma";
import { createPool } from "../lib/db/pool";
import { dataDir } from "../lib/db/embedded";
import { SYSTEM } from "../lib/auth/principal";
import { createSubscription, updateSubscription } from "../lib/subscriptions/manage-subscriptions";
import { createTenant } from "../lib/tenants/manage-tenants";
import { writeAudit } from "../lib/audit";
import { findStateCounts, hasDeliveries } from "../lib/ledger/sql/counts";
import { openSecret } from "../lib/subscriptions/secrets";
import { createUser, DEMO_ADMIN_EMAIL, FIRST_ADMIN_COMMAND } from "../lib/auth/users";
import { generatePassword, hashPassword, verifyPassword } from "../lib/auth/password";
import type { TRetryPolicy } from "../lib/subscriptions/subscription-input";
import type { DistrictSlug } from "./catalog";
import { District, DISTRICTS, secretVerifier, type DistrictKnobs, type DistrictSnapshot } from "./districts";
import { Traffic } from "./traffic";
import { HookledgerClient } from "../client/src/index";
import { createTokenAsAdmin, revokeToken } from "../lib/auth/admin";
import { startControlServer, stateJson } from "./control";
import { ensureDemoEventTypes } from "./event-types";

export type DemoOptions = {
  databaseUrl: string;
  dashboardUrl: string;
  /** Events published per second (default 4; HOOKLEDGER_DEMO_RATE overrides). */
  eventsPerSecond?: number;
  /** Share of assignment.graded events without term_id (default 0.25). */
  missingTermIdRate?: number;
  /** Control page port; the districts take the next seven. 0: ephemeral ports. Default 4700 (HOOKLEDGER_DEMO_PORT). */
  basePort?: number;
  /** Where district state persists; null keeps it in memory. Default <data dir>/demo. */
  stateDir?: string | null;
  /** The demo subscriptions' retry policy when first created. */
  retryPolicy?: TRetryPolicy;
  /** Per-district behaviour overrides (tests make failures more frequent). */
  knobs?: Partial<Record<DistrictSlug, Partial<DistrictKnobs>>>;
  /** Traffic weights per district. */
  weights?: Partial<Record<DistrictSlug, number>>;
  /** Create (or reuse) the demo admin and print the sign-in. Default true. */
  seedUser?: boolean;
  /** Wait for the dashboard to answer before printing the banner. Default true. */
  waitForDashboard?: boolean;
  /**
   * "api": the traffic publishes over HTTP to the dashboard with the typed client and a producer
   * token of its own (`hookledger start --demo`), starting once the dashboard answers. Default
   * "library": in this process, without a dashboard (tests).
   */
  publishVia?: "api" | "library";
  /** A one-line summary this often (default 30 s; 0: never). */
  summaryIntervalMs?: number;
  log?: (line: string) => void;
  /** The start-up log, named in the banner (`hookledger start` passes it). */
  startLog?: string;
  /** Where the lines go that the banner leaves out (each district's address); default: nowhere. */
  detail?: (line: string) => void;
  /**
   * Print the banner (and start the API traffic) when this settles instead of when the dashboard first
   * answers: `hookledger start` settles it after its own "running" line, so the banner is always last.
   */
  ready?: Promise<unknown>;
};

export type Demo = {
  stop: () => Promise<void>;
  controlUrl: string;
  districts: District[];
  traffic: Traffic;
  state: () => ReturnType<typeof stateJson>;
};

// A short ladder so a new user sees retries and exhaustion within two minutes
// (production default is 30 s … 24 h); a 3 s timeout so the legacy handler's
// hangs show as timeouts quickly.
export const DEMO_RETRY_POLICY: TRetryPolicy = { ladderSeconds: [2, 5, 10, 20, 40], timeoutMs: 3000 };

/** What earlier versions used for every demo: published, so a demo admin still using it gets the generated one. */
const PUBLISHED_DEMO_PASSWORD = "hookledger-demo-2026";

export async function startDemo(opts: DemoOptions): Promise<Demo> {
  const log = opts.log ?? ((line: string) => console.log(line));
  // The districts listen on 127.0.0.1; the worker in this process tree needs this too.
  process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS ??= "1";
  const prisma = createPrisma(opts.databaseUrl);
  // The ledger's reads (the summary's counters) run on pg (docs/DESIGN.md, Which driver for what).
  const pool = createPool({ url: opts.databaseUrl, max: 2 });
  const basePort = opts.basePort ?? numberEnv("HOOKLEDGER_DEMO_PORT") ?? 4700;
  const stateDir = opts.stateDir === undefined ? path.join(dataDir(), "demo") : opts.stateDir;
  const statePath = stateDir ? path.join(stateDir, "districts.json") : null;
  const saved = readState(statePath, log);

  const oakridge = secretVerifier(() => loadSecrets(prisma, "sub_demo_oakridge"));
  const districts = DISTRICTS.map((info) => {
    const d = new District(info, opts.knobs?.[info.slug], info.slug === "oakridge" ? oakridge.verify : undefined);
    d.restore(saved[info.slug]);
    return d;
  });

  const cleanup: (() => Promise<unknown>)[] = [];
  const stopAll = async () => {
    for (const f of cleanup.reverse()) await f().catch(() => {});
  };
  try {
    for (const [i, d] of districts.entries()) {
      await d.listen(basePort === 0 ? 0 : basePort + 1 + i);
      cleanup.push(() => d.close());
    }
    cleanup.push(() => prisma.$disconnect());
    cleanup.push(() => pool.end());
    await ensureDemoTenants(prisma);
    await ensureDemoEventTypes(prisma);
    await seedSubscriptions(prisma, pool, districts, opts.retryPolicy ?? DEMO_RETRY_POLICY, log);
    const signIn = opts.seedUser === false ? undefined : await ensureDemoUser(prisma, log, stateDir);

    const viaApi = opts.publishVia === "api";
    const traffic = new Traffic(
      viaApi ? { client: new HookledgerClient({ baseUrl: opts.dashboardUrl, token: await demoProducerToken(prisma) }) } : { prisma },
      {
        eventsPerSecond: opts.eventsPerSecond ?? numberEnv("HOOKLEDGER_DEMO_RATE") ?? 4,
        missingTermIdRate: opts.missingTermIdRate ?? 0.25,
        weights: opts.weights,
      },
      log,
    );

    const save = () => writeState(statePath, districts);
    // hookledger's view of the demo subscriptions (a 410 disables one), for the control page.
    let subscriptions = new Map<string, { state: string; stateReason: string | null }>();
    const refreshSubscriptions = async () => {
      const rows = await prisma.subscription.findMany({ where: { id: { startsWith: "sub_demo_" } }, select: { id: true, state: true, stateReason: true } });
      subscriptions = new Map(rows.map((r) => [r.id, { state: r.state, stateReason: r.stateReason }]));
    };
    await refreshSubscriptions();
    const subsTimer = setInterval(() => void refreshSubscriptions().catch(() => {}), 3_000);
    subsTimer.unref();
    cleanup.push(async () => clearInterval(subsTimer));
    const control = await startControlServer(
      { districts, traffic, dashboardUrl: opts.dashboardUrl, signIn, signatureLibrary: await oakridge.library(), subscriptions: () => subscriptions, onChange: save },
      basePort,
    );
    cleanup.push(() => control.close());

    // Through the API, traffic starts when the dashboard answers (below), not into a refused connection.
    if (!viaApi) traffic.start();
    cleanup.push(() => traffic.stop());
    if (statePath) {
      const timer = setInterval(() => {
        if (districts.some((d) => d.dirty)) save();
      }, 5_000);
      timer.unref();
      // Runs after the servers closed (cleanup runs in reverse), so the last requests are saved.
      cleanup.unshift(async () => {
        clearInterval(timer);
        save();
      });
    }

    const banner = () => printBanner({ opts, signIn, stateDir, controlUrl: control.url, traffic, districts, log });
    let bannerTimer: NodeJS.Timeout | undefined;
    if (opts.waitForDashboard === false) {
      banner();
      if (viaApi) traffic.start();
    } else if (opts.ready) {
      let stopping = false;
      cleanup.push(async () => void (stopping = true));
      void opts.ready.then(() => {
        if (stopping) return;
        if (viaApi) traffic.start();
        banner();
      });
    } else {
      // Printed once the dashboard answers, so it is the last thing on the screen.
      const until = Date.now() + 120_000;
      const poll = async () => {
        const ok = await fetch(`${opts.dashboardUrl}/api/health`).then(
          (r) => r.status < 500 || r.status === 503,
          () => false,
        );
        if (ok || Date.now() > until) {
          if (viaApi) traffic.start();
          return banner();
        }
        bannerTimer = setTimeout(() => void poll(), 500);
      };
      bannerTimer = setTimeout(() => void poll(), 250);
      cleanup.push(async () => clearTimeout(bannerTimer));
    }

    // One line every 30 s, so the terminal says the demo is alive and where to look.
    const summaryEvery = opts.summaryIntervalMs ?? 30_000;
    if (summaryEvery > 0) {
      const summaryTimer = setInterval(() => {
        void summarize(pool, traffic).then(
          (line) => log(`[demo ${new Date().toISOString().slice(11, 19)}] ${line} · controls ${control.url} · dashboard ${opts.dashboardUrl}`),
          () => {},
        );
      }, summaryEvery);
      summaryTimer.unref();
      cleanup.push(async () => clearInterval(summaryTimer));
    }

    let stopped: Promise<void> | undefined;
    return {
      controlUrl: control.url,
      districts,
      traffic,
      state: () =>
        stateJson({ districts, traffic, dashboardUrl: opts.dashboardUrl, signIn, signatureLibrary: "", subscriptions: () => subscriptions, onChange: () => {} }),
      stop: () => (stopped ??= stopAll()),
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/**
 * The whole first screen of a first run, in 80 columns (with the default data directory): the
 * districts' own pages are linked from the control page, so their addresses go to the start-up log.
 */
function printBanner(b: {
  opts: DemoOptions;
  signIn: Awaited<ReturnType<typeof ensureDemoUser>> | undefined;
  stateDir: string | null;
  controlUrl: string;
  traffic: Traffic;
  districts: District[];
  log: (line: string) => void;
}) {
  const { opts, signIn, stateDir, traffic } = b;
  const lines = [
    "",
    "hookledger demo is running.",
    `  Dashboard:          ${opts.dashboardUrl}`,
    signIn ? `  Sign in:            ${signIn.email}${signIn.password ? `  password ${signIn.password}` : "  (with the password you gave it)"}` : null,
    signIn?.password ? `                      (this install's own; kept in ${stateDir ? shownPath(path.join(stateDir, "admin-password")) : "memory"})` : null,
    `  Simulator controls: ${b.controlUrl}   (switches, traffic, districts)`,
    `  Traffic:            about ${traffic.eventsPerSecond} events/s, run id ${traffic.runId}`,
    opts.startLog ? `  Start-up log:       ${opts.startLog}   (--verbose prints it here)` : null,
    "Ctrl-C stops everything; run it again to carry on.",
    "",
  ];
  opts.detail?.(`Demo districts: ${b.districts.map((d) => `${d.info.slug} ${d.statusUrl}`).join(", ")}`);
  b.log(lines.filter((l) => l !== null).join("\n"));
}

/**
 * A producer token for this run's traffic. Tokens are stored hashed, so each run makes a new one
 * and revokes the earlier runs' (a demo install does not collect live tokens).
 */
async function demoProducerToken(prisma: PrismaClient): Promise<string> {
  const name = "demo traffic";
  // The admin page's use cases, so each revoke and the new token are audited as they would be there.
  for (const t of await prisma.apiToken.findMany({ where: { name, revokedAt: null }, select: { id: true } })) await revokeToken(prisma, t.id, SYSTEM);
  return (await createTokenAsAdmin(prisma, { role: "producer", name }, SYSTEM)).token;
}

/** "reason n, …" of the dead letters among the counters (one row per subscription, state and reason), one entry per reason, the largest first. */
export function dlqReasons(rows: { state: string; reason: string; n: number }[]): string {
  const by = new Map<string, number>();
  for (const r of rows) if (r.state === "dead_letter") by.set(r.reason || "?", (by.get(r.reason || "?") ?? 0) + r.n);
  return [...by]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([reason, n]) => `${reason} ${n}`)
    .join(", ");
}

/**
 * "N events published · deliveries: … · DLQ n (reason n, …)", from the trigger-kept counters (no scan of deliveries).
 * Queued deliveries of a paused or disabled subscription (Westfield's, after its 410) are "held", as the dashboard
 * says: counted as pending they would read as a backlog that never drains.
 */
async function summarize(pool: pg.Pool, traffic: Traffic): Promise<string> {
  const rows = (await findStateCounts(pool)).filter((r) => r.subscriptionId.startsWith("sub_demo_"));
  const stopped = new Set((await pool.query<{ id: string }>("SELECT id FROM subscriptions WHERE id LIKE 'sub\\_demo\\_%' AND state <> 'active'")).rows.map((r) => r.id));
  const sum = (keep: (r: (typeof rows)[number]) => boolean) => rows.filter(keep).reduce((a, r) => a + r.n, 0);
  const by = (state: string) => sum((r) => r.state === state);
  const queued = (state: string, held: boolean) => sum((r) => r.state === state && stopped.has(r.subscriptionId) === held);
  const held = queued("pending", true) + queued("scheduled", true);
  const reasons = dlqReasons(rows);
  return (
    `${traffic.published} events published this run · deliveries: ${by("delivered")} delivered, ${queued("scheduled", false)} retrying, ` +
    `${by("in_flight")} in flight, ${queued("pending", false)} pending${held ? `, ${held} held` : ""} · DLQ ${by("dead_letter")}${reasons ? ` (${reasons})` : ""}`
  );
}

/** A path as the person who ran the demo would type it: relative to the working directory when inside it. */
function shownPath(p: string): string {
  const rel = path.relative(process.cwd(), p);
  return rel && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : p;
}

function numberEnv(name: string): number | undefined {
  const v = process.env[name];
  if (v === undefined || v === "") return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number (got ${JSON.stringify(v)}).`);
  return n;
}

/**
 * The districts as tenants with their names ("Lincoln USD"), registered before their subscriptions: otherwise the
 * database registers each subscription's tenant named after its id ("lincoln (lincoln)"). A data directory from
 * before has those placeholders; they are renamed, each with its audit row.
 */
export async function ensureDemoTenants(prisma: PrismaClient, infos: readonly { slug: string; tenantName: string }[] = DISTRICTS): Promise<void> {
  for (const d of infos) {
    const t = await prisma.tenant.findUnique({ where: { id: d.slug } });
    if (!t) {
      await createTenant(prisma, { id: d.slug, name: d.tenantName }, SYSTEM).catch(async (err) => {
        // Another demo process registered it first: fine, it exists now.
        if (!(await prisma.tenant.findUnique({ where: { id: d.slug } }))) throw err;
      });
    } else if (t.name === t.id && t.name !== d.tenantName) {
      await prisma.$transaction(async (tx) => {
        const renamed = await tx.tenant.updateMany({ where: { id: d.slug, name: t.name }, data: { name: d.tenantName } });
        if (renamed.count === 1)
          await writeAudit(tx, {
            actor: SYSTEM.actor,
            action: "tenant.rename",
            targetType: "tenant",
            targetId: d.slug,
            details: { from: t.name, to: d.tenantName },
            tenantId: d.slug,
          });
      });
    }
  }
}

/** Creates the demo subscriptions, or points existing ones at where the districts listen now. */
async function seedSubscriptions(prisma: PrismaClient, pool: pg.Pool, districts: District[], retryPolicy: TRetryPolicy, log: (l: string) => void) {
  for (const d of districts) {
    const { subscriptionId: id, name, slug, eventTypes } = d.info;
    const existing = await prisma.subscription.findUnique({ where: { id }, select: { url: true } });
    if (!existing) {
      await createSubscription(prisma, { id, name, url: d.url, eventTypes, tenant: slug, retryPolicy }, SYSTEM).catch(async (err) => {
        // Another demo process created it first: fine, it exists now.
        if (!(await prisma.subscription.findUnique({ where: { id } }))) throw err;
      });
    } else if (existing.url !== d.url) {
      await updateSubscription(prisma, id, { url: d.url, reason: "demo restarted: the simulated district listens on a new port" }, SYSTEM);
    }
  }
  // The placeholder the first scaffold seeded pointed at a dead port; drop it if nothing was ever sent to it.
  // (A delivery written meanwhile makes the delete fail on its foreign key: then it stays.)
  if (!(await hasDeliveries(pool, "sub_demo").catch(() => true))) await prisma.subscription.deleteMany({ where: { id: "sub_demo" } }).catch(() => {});
  void log;
}

async function loadSecrets(prisma: PrismaClient, subscriptionId: string): Promise<string[]> {
  const rows = await prisma.subscriptionSecret.findMany({
    where: { subscriptionId, OR: [{ expiresAt: null }, { expiresAt: { gt: new Date() } }] },
    select: { id: true, subscriptionId: true, secret: true },
  });
  const out: string[] = [];
  for (const r of rows) {
    try {
      out.push(openSecret(r.secret, r));
    } catch {
      /* a secret this process cannot open: verification is skipped rather than failing every request */
    }
  }
  return out;
}

/**
 * The demo admin's password: generated on the first run and kept in
 * <data dir>/demo/admin-password (mode 0600), so each install has its own and
 * every later run prints the same one. Without a state directory (tests) a
 * fresh one per call.
 */
export function demoPassword(stateDir: string | null): string {
  if (!stateDir) return generatePassword();
  const file = path.join(stateDir, "admin-password");
  const read = () => fs.readFileSync(file, "utf8").trim();
  if (fs.existsSync(file)) return read();
  fs.mkdirSync(stateDir, { recursive: true });
  try {
    fs.writeFileSync(file, `${generatePassword()}\n`, { mode: 0o600, flag: "wx" });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  return read();
}

/**
 * The demo admin: created on the first run with this data directory's
 * generated password, reused afterwards. One still on the password earlier
 * versions published gets the generated one (and loses its sessions); one whose
 * password someone changed is left alone and printed without a password.
 */
export async function ensureDemoUser(
  prisma: PrismaClient,
  log: (l: string) => void,
  stateDir: string | null,
): Promise<{ email: string; password: string | null } | undefined> {
  try {
    const password = demoPassword(stateDir);
    const existing = await prisma.user.findUnique({ where: { email: DEMO_ADMIN_EMAIL } });
    if (!existing) {
      // Hashed before the transaction (scrypt outlasts its timeout on a busy machine); audited like an admin's create.
      const passwordHash = await hashPassword(password);
      const u = await prisma.$transaction(async (tx) => {
        const created = await createUser(tx, { email: DEMO_ADMIN_EMAIL, role: "admin", password, passwordHash });
        await writeAudit(tx, {
          actor: SYSTEM.actor,
          action: "user.create",
          targetType: "user",
          targetId: created.id,
          details: { email: created.email, role: created.role, tenant: null },
        });
        return created;
      });
      return { email: u.email, password };
    }
    if (await verifyPassword(password, existing.passwordHash)) return { email: existing.email, password };
    if (await verifyPassword(PUBLISHED_DEMO_PASSWORD, existing.passwordHash)) {
      const passwordHash = await hashPassword(password);
      await prisma.$transaction(async (tx) => {
        await tx.user.update({ where: { id: existing.id }, data: { passwordHash, sessionVersion: { increment: 1 } } });
        await writeAudit(tx, { actor: SYSTEM.actor, action: "user.password_change", targetType: "user", targetId: existing.id, details: { email: existing.email } });
      });
      log("Demo: the demo admin had the published demo password; it now has this install's generated one.");
      return { email: existing.email, password };
    }
    return { email: existing.email, password: null };
  } catch (err) {
    log(`Demo: could not create the demo user (${(err as Error).message}); create one with \`${FIRST_ADMIN_COMMAND}\`.`);
    return undefined;
  }
}

function readState(file: string | null, log: (l: string) => void): Partial<Record<DistrictSlug, DistrictSnapshot>> {
  if (!file || !fs.existsSync(file)) return {};
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")).districts ?? {};
  } catch (err) {
    log(`Demo: ignoring unreadable district state ${file} (${(err as Error).message}); the districts start empty.`);
    return {};
  }
}

function writeState(file: string | null, districts: District[]) {
  if (!file) return;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify({ savedAt: new Date().toISOString(), districts: Object.fromEntries(districts.map((d) => [d.info.slug, d.snapshot()])) }));
  fs.renameSync(tmp, file);
  for (const d of districts) d.dirty = false;
}

// DNS rebinding: a page on rebind.evil.example whose name is then pointed at
// the dashboard's address talks to the dashboard as its own origin, with the
// Host (and Origin) rebind.evil.example. Pages, sign-in, /metrics and
// /api/health answer only to a Host the dashboard is known by
// (HOOKLEDGER_PUBLIC_URL's name, the listen address's name, localhost, or an
// IP address, which no DNS answer can move); anything else is 421. The bearer
// API is not bound to a name: a rebound page holds no token and none of the
// dashboard's cookies. The demo's control page answers to loopback names only
// and never shows the admin password.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { tokenFor } from "../helpers/api";
import { rawRequest, runServerTs, startServerTs, type ServerProcess } from "../helpers/server-process";
import { createUser } from "../../lib/auth/users";
import { clearTokenCache } from "../../lib/auth/tokens";
import { checkSettings } from "../../lib/auth/startup";
import { startControlServer } from "../../demo/control";
import type { Traffic } from "../../demo/traffic";

const EVIL = "rebind.evil.example";
const METRICS_TOKEN = "metrics-token-for-the-host-check";

let db: TestDb;
let anywhere: ServerProcess;
let published: ServerProcess;
let admin: string;

beforeAll(async () => {
  db = await createTestDatabase();
  clearTokenCache();
  admin = await tokenFor(db.prisma, "admin");
  await createUser(db.prisma, { email: "host@hq.example", role: "admin", password: "correct horse battery" });
  [anywhere, published] = await Promise.all([
    // `hookledger start`'s default: every interface, no public URL.
    startServerTs({ databaseUrl: db.url, env: { HOOKLEDGER_METRICS_TOKEN: METRICS_TOKEN } }),
    // Loopback behind a TLS proxy that serves it as https://hookledger.example.com (metrics open: loopback).
    startServerTs({ databaseUrl: db.url, host: "127.0.0.1", env: { HOOKLEDGER_HOST: "127.0.0.1", HOOKLEDGER_PUBLIC_URL: "https://hookledger.example.com" } }),
  ]);
}, 180_000);
afterAll(async () => {
  anywhere?.stop();
  published?.stop();
  await db?.close();
});

const get = (s: ServerProcess, path: string, host: string, headers: Record<string, string> = {}) => rawRequest(s.port, { path, headers: { host, ...headers } });
const signIn = (s: ServerProcess, host: string, origin: string, headers: Record<string, string> = {}) =>
  rawRequest(s.port, {
    method: "POST",
    path: "/api/auth/signin",
    headers: { host, origin, "content-type": "application/json", ...headers },
    body: JSON.stringify({ email: "host@hq.example", password: "correct horse battery" }),
  });

describe("a dashboard listening on every interface, no HOOKLEDGER_PUBLIC_URL", () => {
  it("a rebound name gets 421 for pages, sign-in, the session, health and metrics; no cookie is set and no attempt recorded", async () => {
    const before = await db.prisma.signInAttempt.count();
    const host = `${EVIL}:${anywhere.port}`;
    for (const path of ["/signin", "/", "/api/health", "/metrics", "/api/auth/session"]) {
      const r = await get(anywhere, path, host);
      expect(r.status, `${path}: ${r.body.slice(0, 200)}`).toBe(421);
      expect(r.body).toContain("HOOKLEDGER_PUBLIC_URL");
    }
    const s = await signIn(anywhere, host, `http://${host}`);
    expect(s.status, s.body).toBe(421);
    expect(s.headers["set-cookie"]).toBeUndefined();
    expect(await db.prisma.signInAttempt.count()).toBe(before);
  });

  it("a forwarded Host must be one it is known by too", async () => {
    const host = `localhost:${anywhere.port}`;
    expect((await get(anywhere, "/signin", host, { "x-forwarded-host": EVIL })).status).toBe(421);
    expect((await signIn(anywhere, host, `http://${EVIL}`, { "x-forwarded-host": EVIL })).status).toBe(421);
  });

  it("localhost and IP addresses are served; the sign-in works under them", async () => {
    for (const name of ["localhost", "127.0.0.1", "[::1]", "LOCALHOST", "10.1.2.3"]) {
      const host = `${name}:${anywhere.port}`;
      expect((await get(anywhere, "/signin", host)).status, host).toBe(200);
    }
    const ok = await signIn(anywhere, `127.0.0.1:${anywhere.port}`, `http://127.0.0.1:${anywhere.port}`);
    expect(ok.status, ok.body).toBe(200);
    expect(String(ok.headers["set-cookie"])).toContain("hl_session=");
  });

  it("machines with a credential are not bound to a name: the bearer API, and health and metrics with the metrics token", async () => {
    const host = `${EVIL}:${anywhere.port}`;
    expect((await get(anywhere, "/api/v1/subscriptions", host, { authorization: `Bearer ${admin}` })).status).toBe(200);
    const publish = await rawRequest(anywhere.port, {
      method: "POST",
      path: "/api/v1/events",
      headers: { host, authorization: `Bearer ${admin}`, "content-type": "application/json" },
      body: JSON.stringify({ id: "evt_host_1", type: "assignment.graded", data: { score: 1 } }),
    });
    expect(publish.status, publish.body).toBe(202);
    expect((await get(anywhere, "/metrics", host, { authorization: `Bearer ${METRICS_TOKEN}` })).status).toBe(200);
    expect((await get(anywhere, "/api/health", host, { authorization: `Bearer ${METRICS_TOKEN}` })).status).not.toBe(421);
    // A wrong token is no credential.
    expect((await get(anywhere, "/metrics", host, { authorization: "Bearer guessed" })).status).toBe(421);
  });
});

describe("HOOKLEDGER_PUBLIC_URL", () => {
  it("its name is served and signs in (behind the TLS proxy); a rebound name is 421, even for loopback's open metrics", async () => {
    const page = await get(published, "/signin", "hookledger.example.com", { "x-forwarded-proto": "https" });
    expect(page.status).toBe(200);
    const ok = await signIn(published, "hookledger.example.com", "https://hookledger.example.com", { "x-forwarded-proto": "https" });
    expect(ok.status, ok.body).toBe(200);
    expect((await get(published, "/metrics", `127.0.0.1:${published.port}`)).status).toBe(200);
    expect((await get(published, "/metrics", `${EVIL}:${published.port}`)).status).toBe(421);
    expect((await get(published, "/signin", EVIL)).status).toBe(421);
    expect((await signIn(published, EVIL, `https://${EVIL}`)).status).toBe(421);
  });

  it("a malformed value stops server.ts and `hookledger start`, naming the variable", async () => {
    for (const bad of ["hookledger.example.com", "ftp://hookledger.example.com", "https://hookledger.example.com/dashboard", "https://"]) {
      const r = await runServerTs({ DATABASE_URL: db.url, HOOKLEDGER_PUBLIC_URL: bad }, 30_000);
      expect(r.code, `${bad}: ${r.output}`).toBe(1);
      expect(r.output).toContain("HOOKLEDGER_PUBLIC_URL");
      const old = process.env.HOOKLEDGER_PUBLIC_URL;
      process.env.HOOKLEDGER_PUBLIC_URL = bad;
      try {
        await expect(checkSettings()).rejects.toThrow(/HOOKLEDGER_PUBLIC_URL/);
      } finally {
        if (old === undefined) delete process.env.HOOKLEDGER_PUBLIC_URL;
        else process.env.HOOKLEDGER_PUBLIC_URL = old;
      }
    }
  });
});

describe("the demo's control page", () => {
  const traffic = { runId: "run_host", paused: true, eventsPerSecond: 0, published: 0, errors: 0, recent: [], ticketable: [] } as unknown as Traffic;
  let control: { url: string; close: () => Promise<void> };
  beforeAll(async () => {
    control = await startControlServer(
      {
        districts: [],
        traffic,
        dashboardUrl: "http://127.0.0.1:3000",
        signIn: { email: "demo@hookledger.local", password: "the-generated-demo-password" },
        signatureLibrary: "standardwebhooks",
        onChange: () => {},
      },
      0,
    );
  });
  afterAll(async () => control?.close());
  const port = () => Number(new URL(control.url).port);

  it("answers to loopback names only", async () => {
    for (const name of ["127.0.0.1", "localhost", "[::1]"]) expect((await get({ port: port() } as ServerProcess, "/", `${name}:${port()}`)).status, name).toBe(200);
    for (const name of [EVIL, "10.1.2.3", "demo.example"]) {
      const host = `${name}:${port()}`;
      expect((await get({ port: port() } as ServerProcess, "/", host)).status, host).toBe(421);
      expect((await get({ port: port() } as ServerProcess, "/api/state", host)).status, host).toBe(421);
      const post = await rawRequest(port(), {
        method: "POST",
        path: "/api/traffic",
        headers: { host, origin: `http://${host}`, "content-type": "application/json" },
        body: '{"paused":false}',
      });
      expect(post.status).toBe(421);
    }
    expect(traffic.paused).toBe(true);
  });

  it("names the demo admin but never shows its password (the terminal and the data directory have it)", async () => {
    const page = await get({ port: port() } as ServerProcess, "/", `127.0.0.1:${port()}`);
    expect(page.body).toContain("demo@hookledger.local");
    expect(page.body).not.toContain("the-generated-demo-password");
    expect(page.body).toContain("admin-password");
  });
});

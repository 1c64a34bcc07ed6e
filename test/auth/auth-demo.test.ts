// The demo is safe to leave running: its admin password is generated per data
// directory, it listens on loopback unless told otherwise, it does not write
// into an external database by accident, and a real start warns while the
// demo admin exists.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { demoPassword, ensureDemoUser } from "../../demo/run";
import { assertDemoDatabase, dashboardHost } from "../../cli/start";
import { firstAdminCommand, firstAdminCommandForServer, prepareAuth } from "../../lib/auth/startup";
import { DEMO_ADMIN_EMAIL } from "../../lib/auth/users";
import { hashPassword, verifyPassword } from "../../lib/auth/password";

let db: TestDb;
let dir: string;
beforeAll(async () => {
  db = await createTestDatabase();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "hl-demo-"));
});
afterAll(async () => {
  await db?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("the demo admin's password", () => {
  it("is generated once per data directory (mode 0600), printed again on later runs, and never the published one", async () => {
    const a = demoPassword(path.join(dir, "one"));
    expect(a).not.toBe("hookledger-demo-2026");
    expect(a.length).toBeGreaterThanOrEqual(20);
    expect(demoPassword(path.join(dir, "one"))).toBe(a);
    expect(fs.statSync(path.join(dir, "one", "admin-password")).mode & 0o777).toBe(0o600);
    expect(demoPassword(path.join(dir, "two"))).not.toBe(a);

    const first = await ensureDemoUser(db.prisma, () => {}, path.join(dir, "one"));
    expect(first).toEqual({ email: DEMO_ADMIN_EMAIL, password: a });
    const again = await ensureDemoUser(db.prisma, () => {}, path.join(dir, "one"));
    expect(again).toEqual({ email: DEMO_ADMIN_EMAIL, password: a });
    const row = await db.prisma.user.findUniqueOrThrow({ where: { email: DEMO_ADMIN_EMAIL } });
    expect(await verifyPassword(a, row.passwordHash)).toBe(true);
  });

  it("a demo admin still on the published password gets this install's generated one", async () => {
    await db.prisma.user.update({ where: { email: DEMO_ADMIN_EMAIL }, data: { passwordHash: await hashPassword("hookledger-demo-2026") } });
    const logs: string[] = [];
    const r = await ensureDemoUser(db.prisma, (l) => logs.push(l), path.join(dir, "one"));
    const row = await db.prisma.user.findUniqueOrThrow({ where: { email: DEMO_ADMIN_EMAIL } });
    expect(await verifyPassword("hookledger-demo-2026", row.passwordHash)).toBe(false);
    expect(await verifyPassword(r!.password!, row.passwordHash)).toBe(true);
    expect(logs.join("\n")).toMatch(/published demo password/);
  });
});

describe("where the demo listens and what it writes to", () => {
  it("the demo's dashboard binds 127.0.0.1 unless --host / HOOKLEDGER_HOST says otherwise; a normal start is unchanged", () => {
    expect(dashboardHost({ demo: true })).toBe("127.0.0.1");
    expect(dashboardHost({ demo: true, host: "0.0.0.0" })).toBe("0.0.0.0");
    expect(dashboardHost({ demo: false })).toBeUndefined();
  });

  it("refuses an external DATABASE_URL unless asked explicitly", () => {
    expect(() => assertDemoDatabase({ demo: true }, "postgres://prod.example/hookledger")).toThrow(/--demo-external-database/);
    expect(() => assertDemoDatabase({ demo: true, demoExternalDatabase: true }, "postgres://prod.example/hookledger")).not.toThrow();
    expect(() => assertDemoDatabase({ demo: true }, "")).not.toThrow();
    expect(() => assertDemoDatabase({ demo: false }, "postgres://prod.example/hookledger")).not.toThrow();
  });

  it("`hookledger start --demo` with an external DATABASE_URL exits 1 before touching it", () => {
    const r = spawnSync(process.execPath, ["bin/hookledger.mjs", "start", "--demo", "--workers", "0", "--port", "3998"], {
      env: { ...process.env, DATABASE_URL: "postgres://nobody:secret@127.0.0.1:1/prod", HOOKLEDGER_DATA_DIR: path.join(dir, "cli") },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/--demo-external-database/);
  });
});

describe("a non-demo start with the demo admin present", () => {
  it("warns loudly, naming the user and what to do; a demo start does not", async () => {
    const errors: string[] = [];
    const spy = vi.spyOn(console, "error").mockImplementation((m: unknown) => void errors.push(String(m)));
    try {
      await prepareAuth({ url: db.url, embedded: false }, { demo: false });
      expect(errors.join("\n")).toMatch(new RegExp(`WARNING: the demo admin ${DEMO_ADMIN_EMAIL.replace(".", "\\.")}`));
      errors.length = 0;
      await prepareAuth({ url: db.url, embedded: false }, { demo: true });
      expect(errors.join("\n")).not.toMatch(/WARNING/);
    } finally {
      spy.mockRestore();
    }
  });
});

describe("the first-admin command `hookledger start` prints", () => {
  it("carries the start's HOOKLEDGER_DATA_DIR, so the user lands in the database the dashboard reads", () => {
    const cmd = "npx hookledger user create --email you@example.com --role admin";
    expect(firstAdminCommand({ embedded: true }, {})).toBe(cmd);
    expect(firstAdminCommand({ embedded: true }, { HOOKLEDGER_DATA_DIR: "/srv/hookledger/data" })).toBe(`HOOKLEDGER_DATA_DIR=/srv/hookledger/data ${cmd}`);
    expect(firstAdminCommand({ embedded: true }, { HOOKLEDGER_DATA_DIR: "/tmp/it's mine" })).toBe(`HOOKLEDGER_DATA_DIR='/tmp/it'\\''s mine' ${cmd}`);
    expect(firstAdminCommand({ embedded: true }, { HOOKLEDGER_DATA_DIR: "rel/data" })).toBe(`HOOKLEDGER_DATA_DIR=${path.resolve("rel/data")} ${cmd}`);
    // The URL holds a password: named, not printed.
    expect(firstAdminCommand({ embedded: false }, { DATABASE_URL: "postgres://u:secret@db/h" })).toBe(`${cmd}   (with this DATABASE_URL set)`);
  });

  it("on the sign-in page names the server's embedded folder even when it is the default, and an external database by its variable", () => {
    const cmd = "npx hookledger user create --email you@example.com --role admin";
    const saved = { url: process.env.DATABASE_URL, dir: process.env.HOOKLEDGER_DATA_DIR };
    try {
      delete process.env.DATABASE_URL;
      delete process.env.HOOKLEDGER_DATA_DIR;
      expect(firstAdminCommandForServer()).toBe(`HOOKLEDGER_DATA_DIR=${path.resolve(".data")} ${cmd}`);
      // An external server (no embedded one runs under the data folder at this URL).
      process.env.DATABASE_URL = "postgres://u:secret@db.example/h";
      // Read on a web page, where "this" DATABASE_URL would point at nothing the reader has.
      expect(firstAdminCommandForServer()).toBe(`${cmd}   (with the server's DATABASE_URL set in your shell)`);
    } finally {
      for (const [k, v] of [
        ["DATABASE_URL", saved.url],
        ["HOOKLEDGER_DATA_DIR", saved.dir],
      ] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });
});

// The dashboard while its database is stopped, and after it is back: an
// operator restarting PostgreSQL (or losing it) reads "hookledger cannot reach
// its database" on every page rather than a bare "This page couldn't load",
// the API answers 503 with Retry-After, and an open page comes back by itself
// once the database answers. A `hookledger start` and an embedded PostgreSQL of
// this spec's own (the suite's shared server stays up), on ports derived from
// E2E_PORT as the portal's framing page does.
import { spawn, type ChildProcess } from "node:child_process";
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { expect, test } from "@playwright/test";
import { startEmbedded } from "../lib/db/embedded";
import { signInWith } from "./helpers";
import { shot } from "./dashboard-seed";

const PORT = Number(process.env.E2E_PORT ?? 3100) + 22_000;
const BASE = `http://127.0.0.1:${PORT}`;
let dir = "";
let db: { stop: () => Promise<void> } | undefined;
let start: ChildProcess | undefined;
let output = "";

const env = () => ({ ...process.env, HOOKLEDGER_DATA_DIR: dir, DATABASE_URL: "", HOOKLEDGER_START_SKIP_BUILD: "1", HOOKLEDGER_SAMPLER: "0", LOG_LEVEL: "warn" });

async function healthy(): Promise<boolean> {
  try {
    return (await fetch(`${BASE}/api/health?scope=db`)).status === 200;
  } catch {
    return false;
  }
}

test.use({ baseURL: BASE });
test.describe.configure({ timeout: 240_000 });

test.beforeAll(async () => {
  test.setTimeout(240_000);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "hl-e2e-dbdown-"));
  // Started here, not by `start`: this process stops it and starts it again, as an operator would.
  db = await startEmbedded({ dir });
  start = spawn(process.execPath, ["bin/hookledger.mjs", "start", "--workers", "0", "--port", String(PORT), "--host", "127.0.0.1"], {
    env: env(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  start.stdout!.on("data", (b) => (output += String(b)));
  start.stderr!.on("data", (b) => (output += String(b)));
  await expect.poll(healthy, { timeout: 180_000, message: output }).toBe(true);
});

test.afterAll(async () => {
  start?.kill("SIGTERM");
  await new Promise((r) => setTimeout(r, 2_000));
  start?.kill("SIGKILL");
  await db?.stop().catch(() => {});
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test("pages say the database is not answering, the API answers 503, and an open page comes back by itself", async ({ page }) => {
  const { stdout } = await promisify(execFile)(process.execPath, ["bin/hookledger.mjs", "user", "create", "--email", "ops@example.test", "--role", "admin"], {
    env: env(),
    encoding: "utf8",
  });
  await signInWith(page, { email: "ops@example.test", password: stdout.trim().split("\n").pop()! });
  await page.goto("/subscriptions");
  await expect(page.getByRole("heading", { name: "Subscriptions", exact: true })).toBeVisible();

  await db!.stop();
  await page.reload();
  await expect(page.getByRole("heading", { name: "hookledger cannot reach its database" })).toBeVisible();
  await expect(page.getByRole("alert").filter({ hasText: "The database is stopped or restarting" })).toContainText("This page tries again every few seconds");
  await shot(page, "database-down-1280");
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, "database-down-390");
  await page.setViewportSize({ width: 1280, height: 900 });

  const res = await page.request.get("/api/v1/subscriptions");
  expect(res.status()).toBe(503);
  expect(res.headers()["retry-after"]).toBe("5");
  expect((await res.json()).error).toMatchObject({ code: "unavailable", message: expect.stringMatching(/cannot reach its database/) });

  // Back on the same port; the open page notices without a reload.
  db = await startEmbedded({ dir });
  await expect(page.getByRole("heading", { name: "Subscriptions", exact: true })).toBeVisible({ timeout: 30_000 });
  await expect(page.getByRole("heading", { name: "hookledger cannot reach its database" })).toHaveCount(0);
});

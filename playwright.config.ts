import fs from "node:fs";
import { register } from "node:module";
import { defineConfig, devices } from "@playwright/test";

// The specs seed through lib/ modules marked `import "server-only"`; in plain Node that package throws.
register("./bin/server-only-hook.mjs", import.meta.url);

// End-to-end tests drive Debian's Chromium (Playwright's own browser download
// does not work offline here): its headless shell where it is installed (the
// package chromium-headless-shell: the old headless mode, which Playwright's
// own downloads use too, and which took about 15% less CPU and time than the
// full browser on e2e/phone.spec.ts and dlq.spec.ts), else the browser itself.
// CHROMIUM_PATH overrides the path.
const CHROMIUM = process.env.CHROMIUM_PATH ?? (fs.existsSync("/usr/bin/chromium-headless-shell") ? "/usr/bin/chromium-headless-shell" : "/usr/bin/chromium");
const PORT = Number(process.env.E2E_PORT ?? 3100);
export const E2E_DATA_DIR = ".data/e2e";
/** e2e/notifications.spec.ts's SMTP server: one port per E2E_PORT, so runs on two ports at once do not take each other's mail. */
export const E2E_SMTP_PORT = PORT + 20_000;
/** e2e/portal.spec.ts's framing page (the SaaS's own site), the one origin the portal may be framed by: one per E2E_PORT too. */
export const E2E_FRAMER_PORT = PORT + 21_000;

export default defineConfig({
  testDir: "e2e",
  timeout: 60_000,
  expect: { timeout: 15_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  reporter: [["list"]],
  globalTeardown: "./e2e/global-teardown.ts",
  use: {
    baseURL: `http://localhost:${PORT}`,
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"],
    },
  },
  projects: [{ name: "chromium", use: { ...devices["Desktop Chrome"], channel: undefined } }],
  webServer: {
    // A fresh embedded database for every run; the build comes from `npm run build` (npm test and test:e2e run it first).
    command: `rm -rf ${E2E_DATA_DIR} && node bin/hookledger.mjs start --workers 1 --port ${PORT}`,
    // ?scope=db: ready when the dashboard and database are; the worker heartbeats a moment later.
    url: `http://localhost:${PORT}/api/health?scope=db`,
    timeout: 180_000,
    reuseExistingServer: false,
    env: {
      HOOKLEDGER_DATA_DIR: E2E_DATA_DIR,
      HOOKLEDGER_ALLOW_PRIVATE_TARGETS: "1",
      LOG_LEVEL: "warn",
      DATABASE_URL: "",
      // e2e/portal.spec.ts frames the district portal in a page it serves on this port.
      HOOKLEDGER_PORTAL_FRAME_ANCESTORS: `http://localhost:${E2E_FRAMER_PORT}`,
      // e2e/notifications.spec.ts receives the notification e-mail on a local SMTP server it starts on this port.
      HOOKLEDGER_SMTP_URL: `smtp://127.0.0.1:${E2E_SMTP_PORT}`,
      HOOKLEDGER_NOTIFY_FROM: "hookledger <notify@hookledger.test>",
    },
    stdout: "pipe",
    stderr: "pipe",
    // SIGTERM, so `hookledger start` stops its workers and then its database. Playwright's default is SIGKILL to the
    // process group, which never reaches the embedded PostgreSQL (it runs in its own session): it was left running.
    gracefulShutdown: { signal: "SIGTERM", timeout: 20_000 },
  },
});

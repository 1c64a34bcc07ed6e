// A dashboard port that is already taken, as by a dashboard left running after
// its `hookledger start` was killed with SIGKILL (its children outlive it):
// `hookledger start` says so in one line and exits 1 before it starts anything,
// instead of taking the other process's health answer for its own ("hookledger
// is running") and restarting a dashboard that cannot listen; and server.ts
// itself exits 1 naming the port, not 0 after an uncaught exception.
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../../lib/db/embedded";

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const f of cleanup.splice(0)) f();
});

/** A stand-in for a left-over dashboard: it answers /api/health 200 on 127.0.0.1:port. */
async function occupy(): Promise<number> {
  const port = await freePort();
  const server = http.createServer((_req, res) => res.end('{"ok":true}'));
  await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
  cleanup.push(() => server.close());
  return port;
}

function run(args: string[], env: Record<string, string>, ms: number): Promise<{ code: number | null; output: string }> {
  const rest = { ...process.env };
  delete rest.DATABASE_URL;
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], detached: true, env: { ...rest, ...env } });
  let output = "";
  child.stdout!.on("data", (b) => (output += String(b)));
  child.stderr!.on("data", (b) => (output += String(b)));
  const kill = () => {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      /* gone */
    }
  };
  cleanup.push(kill);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      kill();
      resolve({ code: null, output });
    }, ms);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe("a dashboard port already in use", () => {
  it("hookledger start refuses at once, naming the port, and starts nothing", { timeout: 60_000 }, async () => {
    const port = await occupy();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hl-port-"));
    cleanup.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const r = await run(
      [path.resolve("bin/hookledger.mjs"), "start", "--port", String(port), "--host", "127.0.0.1"],
      { HOOKLEDGER_DATA_DIR: dir, HOOKLEDGER_START_SKIP_BUILD: "1" },
      40_000,
    );
    expect(r.output).not.toContain("hookledger is running");
    expect(r.output).toContain(`port ${port} is already in use on 127.0.0.1`);
    expect(r.code, r.output).toBe(1);
    // Refused before the embedded database was started.
    expect(fs.existsSync(path.join(dir, "postgres"))).toBe(false);
  });

  it("server.ts exits 1 with one line naming the port", { timeout: 120_000 }, async () => {
    const port = await occupy();
    const r = await run(
      [path.resolve("bin/run-ts.mjs"), "server.ts", "-p", String(port), "-H", "127.0.0.1"],
      { DATABASE_URL: "postgres://hookledger@127.0.0.1:1/none", HOOKLEDGER_SAMPLER: "0", NEXT_TELEMETRY_DISABLED: "1" },
      90_000,
    );
    expect(r.output).toContain(`hookledger dashboard: port ${port} is already in use on 127.0.0.1`);
    expect(r.code, r.output).toBe(1);
  });
});

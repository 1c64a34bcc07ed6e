import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { startApiServer, type TestServer } from "../helpers/client-server";
import * as subs from "../../app/api/v1/subscriptions/route";

let db: TestDb;
let server: TestServer;
let token: string;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hl-publish-"));

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startApiServer();
  token = await tokenFor(db.prisma, "producer");
  const admin = await tokenFor(db.prisma, "admin");
  for (const id of ["sub_a", "sub_b", "sub_c"]) await call(subs.POST, { token: admin, body: { id, name: id, url: `https://${id}.example.test/h`, eventTypes: ["*"] } });
});
afterAll(async () => {
  await server?.close();
  await db?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function run(file: string, extra: string[] = []) {
  return promisify(execFile)(process.execPath, ["bin/hookledger.mjs", "publish", "--file", file, "--url", server.url, ...extra], {
    env: { ...process.env, HOOKLEDGER_TOKEN: token },
    timeout: 120_000,
  }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

const line = (i: number) => JSON.stringify({ id: `cli_${i}`, type: "roster.synced", data: { n: i }, subject: { tenant: "lincoln" } });

describe("hookledger publish --file", () => {
  it("publishes an NDJSON file in batches through the API, with a progress line, exit 0", async () => {
    const file = path.join(dir, "ok.ndjson");
    fs.writeFileSync(file, Array.from({ length: 1200 }, (_, i) => line(i)).join("\n") + "\n");
    const r = await run(file, ["--batch", "250"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Published 1,200 events in [\d.]+ s: 1200 created, 0 duplicate, 0 failed\./);
    expect(r.stderr).toMatch(/1,200 events, \d+ events\/s: 1200 created, 0 duplicate, 0 failed/);
    expect(server.seen.filter((s) => s === "POST /api/v1/events/batch")).toHaveLength(5);
    const n = await db.pool.query("SELECT count(*)::int AS n FROM deliveries WHERE event_id LIKE 'cli_%'");
    expect(n.rows[0].n).toBe(3600);

    const again = await run(file);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("0 created, 1200 duplicate, 0 failed");
  });

  it("reports each bad line by number and exits 1, publishing the good ones", async () => {
    const file = path.join(dir, "mixed.ndjson");
    fs.writeFileSync(file, [line(5000), "{not json", JSON.stringify({ id: "cli_bad", type: "roster.synced" }), "", line(5001)].join("\n"));
    const r = await run(file);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^Published 2 of 4 events in [\d.]+ s: 2 created, 0 duplicate, 2 failed \(each failure is listed above\)\.$/m);
    expect(r.stderr).toContain("line 2: not JSON");
    expect(r.stderr).toMatch(/line 3 \(cli_bad\): validation_failed: events\.\d+\.data/);
    const ids = (await db.pool.query("SELECT id FROM events WHERE id IN ('cli_5000', 'cli_5001', 'cli_bad') ORDER BY id")).rows.map((x) => x.id);
    expect(ids).toEqual(["cli_5000", "cli_5001"]);
  });

  it("a server that is not there: says which address could not be reached and why, per batch, not 'fetch failed'", async () => {
    const file = path.join(dir, "gap.ndjson");
    fs.writeFileSync(file, [line(7000), "{not json", line(7001)].join("\n"));
    // A port that was free a moment ago: nothing listens there.
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", () => r()));
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const r = await run(file, ["--url", `http://127.0.0.1:${port}`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(`^the 2 events of lines 1–3: could not reach http://127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\); is hookledger running there\\?`, "m"),
    );
    expect(r.stderr).not.toContain("fetch failed");
    // No --url: the dashboard's own port (PORT), as `hookledger start` listens on it.
    const byPort = await promisify(execFile)(process.execPath, ["bin/hookledger.mjs", "publish", "--file", file], {
      env: { ...process.env, HOOKLEDGER_URL: undefined, HOOKLEDGER_TOKEN: token, PORT: String(port) },
      timeout: 60_000,
    }).catch((e: { code: number; stderr: string }) => e);
    expect(byPort.stderr).toContain(`could not reach http://localhost:${port}`);
    const bad = await run(file, ["--url", "notaurl"]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("--url must be the server's address");
  });

  it("Ctrl-C stops sending, waits for the answers on the way, and says after which line it stopped; exit 130", { timeout: 120_000 }, async () => {
    const file = path.join(dir, "long.ndjson");
    fs.writeFileSync(
      file,
      Array.from({ length: 200_000 }, (_, i) => JSON.stringify({ id: `int_${i + 1}`, type: "roster.synced", data: {}, subject: { tenant: "lincoln" } })).join("\n"),
    );
    const child = spawn(process.execPath, ["bin/hookledger.mjs", "publish", "--file", file, "--url", server.url, "--batch", "100"], {
      env: { ...process.env, HOOKLEDGER_TOKEN: token },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b) => (stdout += String(b)));
    child.stderr.on("data", (b) => (stderr += String(b)));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    // Interrupted mid-file: once the first progress line says some were sent.
    while (!/events\/s/.test(stderr)) {
      if (child.exitCode !== null) throw new Error(`publish ended before it was interrupted:\n${stdout}\n${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill("SIGINT");
    expect(await exited, `${stdout}\n${stderr}`).toBe(130);
    const m = /Stopped after line (\d+) of .*long\.ndjson; nothing after it was sent\./.exec(stdout);
    expect(m, `${stdout}\n${stderr}`).not.toBeNull();
    const stoppedAt = Number(m![1]);
    expect(stoppedAt).toBeGreaterThan(0);
    expect(stoppedAt).toBeLessThan(200_000);
    expect(stdout).toContain(`Published ${stoppedAt.toLocaleString("en-US")} events`);
    // What it says is what the server holds: every line up to there, none after.
    const held = await db.pool.query("SELECT count(*)::int AS n, max(substring(id from 5)::int) AS last FROM events WHERE id LIKE 'int\\_%'");
    expect(held.rows[0]).toEqual({ n: stoppedAt, last: stoppedAt });
  });

  it("--help gives --url's default once, and where it comes from", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ["bin/hookledger.mjs", "publish", "--help"], {
      env: { ...process.env, PORT: "3640", HOOKLEDGER_URL: undefined },
      timeout: 60_000,
    });
    const url = stdout.slice(stdout.indexOf("--url"), stdout.indexOf("--token"));
    expect(url.match(/default/g)).toHaveLength(1);
    expect(url.replace(/\s+/g, " ")).toContain('(default: "http://localhost:3640", env: HOOKLEDGER_URL)');
  });

  it("refuses a batch size over 500 and a missing token", async () => {
    const file = path.join(dir, "ok.ndjson");
    expect((await run(file, ["--batch", "501"])).code).not.toBe(0);
    const noToken = await promisify(execFile)(process.execPath, ["bin/hookledger.mjs", "publish", "--file", file, "--url", server.url], {
      env: { ...process.env, HOOKLEDGER_TOKEN: "" },
    }).catch((e: { code: number; stderr: string }) => e);
    expect((noToken as { code: number }).code).toBe(2);
  });
});

// server.ts as `hookledger start` runs it, for tests that need the real front:
// the peer address of the socket, the Host a client sends, and Next's own
// request handling (the production build). Plus a raw HTTP request that sends
// exactly the Host and forwarding headers it is given.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { freePort } from "../../lib/db/embedded";

export type ServerProcess = { port: number; child: ChildProcess; output: string[]; stop: () => void };

/** Starts server.ts on a free port (`host` for -H; none: every interface) and waits until it listens. */
export async function startServerTs(opts: { databaseUrl: string; host?: string; env?: Record<string, string> }): Promise<ServerProcess> {
  if (!fs.existsSync(".next/BUILD_ID")) throw new Error("server.ts serves the production build: run `npx next build` first");
  const port = await freePort();
  const output: string[] = [];
  const child = spawn(process.execPath, [path.resolve("bin/run-ts.mjs"), "server.ts", "-p", String(port), ...(opts.host ? ["-H", opts.host] : [])], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, DATABASE_URL: opts.databaseUrl, HOOKLEDGER_SAMPLER: "0", LOG_LEVEL: "warn", NEXT_TELEMETRY_DISABLED: "1", ...opts.env },
  });
  child.stdout!.on("data", (b) => output.push(String(b)));
  child.stderr!.on("data", (b) => output.push(String(b)));
  const end = Date.now() + 90_000;
  while (!output.join("").includes("listening on")) {
    if (child.exitCode !== null || Date.now() > end) throw new Error(`server.ts did not start:\n${output.join("")}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { port, child, output, stop: () => child.kill("SIGKILL") };
}

/** Runs server.ts with `env` and resolves with its exit code and output, for a start that must fail. */
export function runServerTs(env: Record<string, string>, timeoutMs = 60_000): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.resolve("bin/run-ts.mjs"), "server.ts", "-p", "0", "-H", "127.0.0.1"], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, LOG_LEVEL: "warn", NEXT_TELEMETRY_DISABLED: "1", ...env },
    });
    let output = "";
    child.stdout!.on("data", (b) => (output += String(b)));
    child.stderr!.on("data", (b) => (output += String(b)));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

export type RawAnswer = { status: number; headers: http.IncomingHttpHeaders; body: string };

/** One request to 127.0.0.1:port with these headers as given (Host included), no redirects followed. */
export function rawRequest(port: number, opts: { method?: string; path: string; headers?: Record<string, string>; body?: string }): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method: opts.method ?? "GET", path: opts.path, headers: opts.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

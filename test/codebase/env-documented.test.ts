// Every HOOKLEDGER_ variable the code reads is documented: in README.md's
// configuration section or in docs/ (chaos/README.md and the alert rules'
// README for their own). A knob nobody can find is one nobody can set, or
// unset, when it matters. The tests' own variables (set and read inside test/
// and e2e/) are theirs.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const NAME = /\bHOOKLEDGER_[A-Z0-9_]+/g;

function tracked(): string[] {
  return execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" })
    .split("\0")
    .filter((f) => f && fs.existsSync(path.join(ROOT, f)));
}

it("names every HOOKLEDGER_ variable the code reads in README.md or docs/", () => {
  const files = tracked();
  const code = files.filter((f) => /\.(ts|tsx|mjs|cjs|js|sh)$/.test(f) && !/^(test|e2e)\//.test(f) && !f.startsWith("client/dist/"));
  const read = new Map<string, string>();
  for (const f of code) for (const m of fs.readFileSync(path.join(ROOT, f), "utf8").matchAll(NAME)) if (!read.has(m[0])) read.set(m[0], f);
  const docs = ["README.md", "chaos/README.md", "deploy/prometheus/README.md", ...files.filter((f) => /^docs\/.*\.md$/.test(f))]
    .filter((f) => fs.existsSync(path.join(ROOT, f)))
    .map((f) => fs.readFileSync(path.join(ROOT, f), "utf8"))
    .join("\n");
  const documented = new Set([...docs.matchAll(NAME)].map((m) => m[0]));
  const missing = [...read].filter(([name]) => !documented.has(name)).map(([name, file]) => `${name} (read in ${file})`);
  expect(missing).toEqual([]);
  // The scan sees what it should: a variable from the configuration table and one from the worker's tuning.
  expect(read.has("HOOKLEDGER_SECRET_KEY") && read.has("HOOKLEDGER_WORKER_BATCH")).toBe(true);
});

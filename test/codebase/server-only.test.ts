// `import "server-only"` keeps database, secret and SQL modules out of browser
// bundles (next build fails if a client component reaches one). Checked here
// without a build: the modules that must carry the marker do, no module that a
// "use client" file (or next.config.ts, which Next loads in plain Node) imports
// carries it, and the Node processes that are not Next still load marked
// modules (bin/server-only-hook.mjs).
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { sourceFiles } from "../helpers/source-files";

const ROOT = path.resolve(import.meta.dirname, "../..");
const MARKER = /^import "server-only";$/m;
const rel = (p: string) => path.relative(ROOT, p).split(path.sep).join("/");

/** The TypeScript sources below `dir`, declaration files aside. */
const walk = (dir: string) => sourceFiles(dir, /^(?!.*\.d\.ts$).*\.tsx?$/);

function resolveImport(from: string, spec: string): string | undefined {
  let base: string;
  if (spec.startsWith("@/")) base = path.join(ROOT, spec.slice(2));
  else if (spec.startsWith(".")) base = path.resolve(path.dirname(from), spec);
  else return undefined;
  for (const ext of ["", ".ts", ".tsx", "/index.ts", "/index.tsx"]) {
    const p = base + ext;
    if (fs.existsSync(p) && fs.statSync(p).isFile()) return p;
  }
  return undefined;
}

/** Specifiers a module loads at run time: static imports and re-exports (not `import type`), dynamic import(). */
function runtimeImports(src: string): string[] {
  const out: string[] = [];
  const re = /(?:^|\n)\s*(?:import|export)\s+(type\s+)?([^;]*?)\s+from\s+["']([^"']+)["']|import\s*\(\s*["']([^"']+)["']\s*\)|(?:^|\n)\s*import\s+["']([^"']+)["']/g;
  for (let m = re.exec(src); m; m = re.exec(src)) {
    if (m[1]) continue;
    const names = m[2]?.trim();
    if (names && /^\{[^}]*\}$/.test(names)) {
      const parts = names
        .slice(1, -1)
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
      if (parts.length > 0 && parts.every((s) => s.startsWith("type "))) continue;
    }
    out.push((m[3] ?? m[4] ?? m[5])!);
  }
  return out;
}

/** Every project module reachable from `entries`; a "use server" module is a boundary (a client only gets a reference to it). */
function reachable(entries: string[]): Map<string, string> {
  const seen = new Map<string, string>();
  const stack: [string, string][] = entries.map((e) => [e, "(entry)"]);
  while (stack.length > 0) {
    const [file, from] = stack.pop()!;
    if (seen.has(file)) continue;
    seen.set(file, from);
    const src = fs.readFileSync(file, "utf8");
    if (/^["']use server["']/m.test(src) && from !== "(entry)") continue;
    for (const spec of runtimeImports(src)) {
      const r = resolveImport(file, spec);
      if (r) stack.push([r, file]);
    }
  }
  return seen;
}

describe('import "server-only"', () => {
  it("marks the database, ledger SQL and secret-handling modules", () => {
    const must = [
      ...walk(path.join(ROOT, "lib/db")),
      ...walk(path.join(ROOT, "lib/ledger/sql")),
      ...["keys", "password", "session", "tokens", "cookies", "users", "signin"].map((n) => path.join(ROOT, `lib/auth/${n}.ts`)),
    ].filter((f) => fs.existsSync(f));
    const unmarked = must.filter((f) => !MARKER.test(fs.readFileSync(f, "utf8"))).map(rel);
    expect(unmarked, 'add `import "server-only";` above the first import').toEqual([]);
  });

  it("is on no module that a client component or next.config.ts loads", () => {
    const clientEntries = ["app", "components", "lib"].flatMap((d) => walk(path.join(ROOT, d))).filter((f) => /^["']use client["']/m.test(fs.readFileSync(f, "utf8")));
    expect(clientEntries.length).toBeGreaterThan(0);
    const seen = reachable([...clientEntries, path.join(ROOT, "next.config.ts")]);
    // The walk does reach into lib/ (the shared names and formatting the UI imports).
    expect([...seen.keys()].map(rel).some((f) => f.startsWith("lib/") && f !== "lib/client/api.ts")).toBe(true);
    const marked = [...seen].filter(([f]) => MARKER.test(fs.readFileSync(f, "utf8"))).map(([f, from]) => `${rel(f)} (imported by ${rel(from)})`);
    expect(marked).toEqual([]);
  });

  it("loads in the processes that are not Next (bin/run-ts.mjs maps it to an empty module)", () => {
    const r = spawnSync(process.execPath, ["bin/run-ts.mjs", "test/fixtures/server-only-import.ts"], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
    expect(r.stderr).not.toMatch(/Server Component/);
    expect(r.stdout.trim()).toBe("loaded");
    expect(r.status).toBe(0);
  });
});

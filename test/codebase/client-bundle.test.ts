// What a client component imports is shipped to the browser. zod must not be: its first schema probes for eval
// (`new Function`), which the pages' CSP refuses and reports as a violation on every load of the page. A client
// component that needs a limit or a list from a module of schemas imports it from a zod-free module instead
// (lib/notify/limits.ts). This walks every "use client" file's imports, as far as they reach in the repository,
// and names the chain to any module that imports zod. A "use server" module is left out: the browser gets a
// reference to its actions, not its code. `import type` brings nothing.
import { existsSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";

const ROOT = process.cwd();

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(rel));
    else if (/\.tsx?$/.test(e.name)) out.push(rel);
  }
  return out;
}

const directive = (text: string) => text.match(/^\s*(?:\/\/[^\n]*\n\s*)*["']use (client|server)["']/)?.[1];

/** The module specifiers a file imports for their values (not `import type`, not `export type … from`). */
function valueImports(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/^\s*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?["']([^"']+)["']/gm)) if (!m[2]) out.push(m[3]);
  return out;
}

function resolve(from: string, spec: string): string | null {
  let base: string;
  if (spec.startsWith("@/")) base = spec.slice(2);
  else if (spec.startsWith(".")) base = path.join(path.dirname(from), spec);
  else return null;
  for (const c of [base, `${base}.ts`, `${base}.tsx`, path.join(base, "index.ts"), path.join(base, "index.tsx")])
    if (existsSync(path.join(ROOT, c)) && /\.tsx?$/.test(c)) return path.normalize(c);
  return null;
}

/** The chain from `file` to a module that imports zod, or null. */
function zodChain(file: string, seen = new Set<string>()): string[] | null {
  if (seen.has(file)) return null;
  seen.add(file);
  const text = readFileSync(path.join(ROOT, file), "utf8");
  if (directive(text) === "server") return null;
  for (const spec of valueImports(text)) {
    if (spec === "zod" || spec.startsWith("zod/")) return [file, spec];
    const next = resolve(file, spec);
    const chain = next && zodChain(next, seen);
    if (chain) return [file, ...chain];
  }
  return null;
}

it("no client component brings zod into the browser's bundle", () => {
  const clients = ["app", "components", "lib"].flatMap(sources).filter((f) => directive(readFileSync(path.join(ROOT, f), "utf8")) === "client");
  expect(clients.length).toBeGreaterThan(20);
  const found = clients.map((f) => zodChain(f)).filter((c): c is string[] => c !== null);
  expect(
    found.map((c) => c.join(" → ")),
    "client components whose imports reach zod",
  ).toEqual([]);
});

it("the walk finds zod where it is imported (a check that can fail)", () => {
  expect(zodChain("lib/notify/input.ts")).toEqual(["lib/notify/input.ts", "zod"]);
  expect(valueImports('import type { X } from "zod";\nimport { y } from "./y";\nexport { z } from "../z";')).toEqual(["./y", "../z"]);
});

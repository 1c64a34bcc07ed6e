// What a worker process loads at start: `hookledger worker` (cli/main.ts) and
// worker/main.ts with the companions it imports as it starts. Every worker
// pays for each module in memory (BENCHMARKS.md, peak worker RSS), so code the
// worker never runs stays out of its graph: the Prisma client (about 20 MB; the
// worker writes through pg), nodemailer (loaded at the first e-mail sent), and
// the dashboard's framework. Imports are read from the sources: static imports
// and re-exports everywhere (not `import type`), and worker/main.ts's dynamic
// imports, which run at start; a dynamic import elsewhere loads when called.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const STATIC = /^\s*(?:import|export)\s+(?!type\b)(?:[^'";]*?\sfrom\s+)?["']([^"']+)["']/gm;
const DYNAMIC = /\bimport\(\s*["']([^"']+)["']\s*\)/g;
const FORBIDDEN = [
  { why: "the Prisma client", test: (s: string) => s === "@prisma/client" || s.startsWith("@prisma/client/") || s.includes("lib/generated/prisma/") },
  { why: "nodemailer", test: (s: string) => s === "nodemailer" },
  { why: "the dashboard's framework", test: (s: string) => ["next", "react", "react-dom"].includes(s.split("/")[0]) },
];

function resolveLocal(from: string, spec: string): string | null {
  const base = path.resolve(path.dirname(from), spec);
  for (const f of [base, `${base}.ts`, `${base}.tsx`, path.join(base, "index.ts")]) if (existsSync(f) && f.match(/\.tsx?$/)) return f;
  return null;
}

/** Every local file and package the roots load, each with the chain of files that brought it in. */
export function workerGraph(roots: string[], followDynamicIn: string[]) {
  const files = new Map<string, string[]>();
  const packages = new Map<string, string[]>();
  const queue = roots.map((r) => ({ file: path.join(ROOT, r), chain: [r] }));
  while (queue.length) {
    const { file, chain } = queue.shift()!;
    if (files.has(file)) continue;
    files.set(file, chain);
    const src = readFileSync(file, "utf8").replace(/^\s*\/\/.*$/gm, "");
    const specs = [...src.matchAll(STATIC)].map((m) => m[1]);
    if (followDynamicIn.includes(path.relative(ROOT, file))) specs.push(...[...src.matchAll(DYNAMIC)].map((m) => m[1]));
    for (const spec of specs) {
      if (spec.startsWith(".")) {
        const next = resolveLocal(file, spec);
        if (next) queue.push({ file: next, chain: [...chain, path.relative(ROOT, next)] });
        else if (!spec.endsWith(".json")) throw new Error(`${path.relative(ROOT, file)}: cannot resolve ${spec}`);
      } else if (!spec.startsWith("node:")) {
        if (!packages.has(spec)) packages.set(spec, chain);
      }
    }
  }
  return { files: [...files].map(([f, chain]) => ({ file: path.relative(ROOT, f), chain })), packages: [...packages].map(([p, chain]) => ({ name: p, chain })) };
}

const offences = (g: ReturnType<typeof workerGraph>) =>
  [...g.files.map((f) => ({ spec: f.file, chain: f.chain })), ...g.packages.map((p) => ({ spec: p.name, chain: p.chain }))].flatMap(({ spec, chain }) =>
    FORBIDDEN.filter((f) => f.test(spec)).map((f) => `${f.why}: ${spec}, through ${chain.join(" → ")}`),
  );

describe("what a worker process loads at start", () => {
  const graph = workerGraph(["cli/main.ts", "worker/main.ts"], ["worker/main.ts"]);

  it("walks the worker, its companions and their imports", () => {
    const files = graph.files.map((f) => f.file);
    // The companions worker/main.ts starts, and what the claim loop and the sender run on.
    for (const f of [
      "worker/notifier.ts",
      "worker/redrive-pacer.ts",
      "lib/retention/scheduler.ts",
      "lib/notify/channels.ts",
      "lib/subscriptions/endpoint-auth.ts",
      "lib/ledger/sql/write-and-claim.ts",
    ])
      expect(files).toContain(f);
    expect(graph.packages.map((p) => p.name)).toEqual(expect.arrayContaining(["pg", "undici", "zod"]));
  });

  it("leaves out the Prisma client, nodemailer and the dashboard's framework", () => {
    expect(offences(graph)).toEqual([]);
  });

  it("would name a forbidden import and the chain that brings it in", () => {
    // The dashboard's subscription service writes through Prisma: reached from it, the client is found.
    const dashboard = workerGraph(["lib/subscriptions/manage-subscriptions.ts"], []);
    expect(offences(dashboard).some((o) => o.startsWith("the Prisma client: lib/generated/prisma/client.ts, through lib/subscriptions/manage-subscriptions.ts"))).toBe(
      true,
    );
  });
});

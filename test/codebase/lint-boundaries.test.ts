// The layering (docs/STYLE.md, "Layers") is enforced by ESLint: each forbidden
// pair in the effective configuration (eslint.config.mjs's zones) is tried through ESLint's Node API on a
// file that does not exist on disk (lintText with a path inside the importing
// folder), importing a real file of the forbidden folder. Written as relative
// paths, as "@/" aliases and as dynamic import(), since the CLI uses all three.
// The same rule holds the drivers apart (docs/DESIGN.md, "Which driver for
// what"): the ledger and the hot paths may not import Prisma.
import fs from "node:fs";
import path from "node:path";
import { ESLint } from "eslint";
import { beforeAll, describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const RULE = "import/no-restricted-paths";
let eslint: ESLint;
let pairs: [string, string][] = [];
let driverPairs: [string, string][] = [];

/** Some real module in `dir`, as a path without extension relative to the root (the resolver must find it). */
function someModule(dir: string): string {
  const walk = (d: string): string | undefined => {
    for (const e of fs.readdirSync(path.join(ROOT, d), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const rel = path.posix.join(d, e.name);
      if (e.isFile() && /\.tsx?$/.test(e.name) && !e.name.endsWith(".d.ts") && !e.name.includes(".test.")) return rel.replace(/\.tsx?$/, "");
    }
    for (const e of fs.readdirSync(path.join(ROOT, d), { withFileTypes: true })) {
      if (e.isDirectory() && !e.name.startsWith(".") && e.name !== "results") {
        const found = walk(path.posix.join(d, e.name));
        if (found) return found;
      }
    }
    return undefined;
  };
  const found = walk(dir);
  if (!found) throw new Error(`no module under ${dir}/ to import in the probe`);
  return found;
}

async function boundaryErrors(file: string, code: string) {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  return result.messages.filter((m) => m.ruleId === RULE).map((m) => m.message);
}

beforeAll(async () => {
  eslint = new ESLint({ cwd: ROOT });
  const config = await eslint.calculateConfigForFile(path.join(ROOT, "lib/__layers_probe.ts"));
  const [, options] = config.rules[RULE] as [unknown, { zones: { target: string; from: string }[] }];
  const all = options.zones.map((z): [string, string] => [z.target.replace(/^\.\//, ""), z.from.replace(/^\.\//, "")]);
  const prisma = (from: string) => from.includes("prisma");
  pairs = all.filter(([, f]) => !prisma(f));
  driverPairs = all.filter(([, f]) => prisma(f));
});

describe("the import-boundary rule", () => {
  it("stops lib/ from importing the worker, relative, aliased or dynamic", async () => {
    const target = someModule("worker");
    const errors = await boundaryErrors(
      "lib/__layers_probe.ts",
      [
        `import * as a from "../${target}";`,
        `import * as b from "@/${target}";`,
        `export async function c() { return import("../${target}"); }`,
        `export const all = [a, b];`,
      ].join("\n"),
    );
    expect(errors).toHaveLength(3);
    for (const e of errors) expect(e).toContain("lib/ must not import worker/");
  });

  it("stops every pair the configuration forbids, and forbids the whole layering", async () => {
    const expected = {
      lib: ["app", "components", "worker", "cli", "demo", "bench", "chaos"],
      components: ["app", "worker", "cli", "demo", "bench", "chaos"],
      worker: ["app", "components", "cli", "demo"],
      app: ["worker", "cli", "demo", "bench", "chaos"],
    };
    const wanted = Object.entries(expected).flatMap(([t, froms]) => froms.map((f) => `${t}->${f}`));
    expect(pairs.map(([t, f]) => `${t}->${f}`).sort()).toEqual(wanted.sort());
    for (const [target, from] of pairs) {
      const errors = await boundaryErrors(`${target}/__layers_probe.ts`, `import * as m from "@/${someModule(from)}";\nexport const x = m;\n`);
      expect(errors, `${target} -> ${from}`).toEqual([expect.stringContaining(`${target}/ must not import ${from}/`)]);
    }
  });

  it("lets the layers import downward and sideways where allowed", async () => {
    expect(await boundaryErrors("cli/__layers_probe.ts", `import * as m from "../${someModule("worker")}";\nexport const x = m;\n`)).toEqual([]);
    expect(await boundaryErrors("app/__layers_probe.ts", `import * as m from "@/${someModule("lib")}";\nexport const x = m;\n`)).toEqual([]);
    expect(await boundaryErrors("worker/__layers_probe.ts", `import * as m from "../${someModule("lib")}";\nexport const x = m;\n`)).toEqual([]);
    expect(await boundaryErrors("test/__layers_probe.ts", `import * as m from "../${someModule("worker")}";\nexport const x = m;\n`)).toEqual([]);
  });
});

describe("the driver rule: no Prisma in the ledger and the hot paths", () => {
  const probe = (target: string) => (target.endsWith(".ts") ? target : `${target}/__driver_probe.ts`);
  const prismaImports = (up: string) =>
    [
      `import { PrismaClient } from "@prisma/client";`,
      `import { Prisma } from "${up}generated/prisma/client";`,
      `import type { Tx } from "@/lib/db/prisma";`,
      `export async function d() { return import("${up}db/prisma"); }`,
      `export const all = [PrismaClient, Prisma] as unknown as Tx;`,
    ].join("\n");

  it("stops lib/ledger/ importing Prisma: the package, the generated client and lib/db/prisma.ts, relative, aliased, type-only or dynamic", async () => {
    const errors = await boundaryErrors("lib/ledger/sql/__driver_probe.ts", prismaImports("../../"));
    expect(errors).toHaveLength(4);
    for (const e of errors) expect(e).toContain("lib/ledger must not import Prisma");
  });

  it("holds every folder of the split, and nothing else", async () => {
    expect([...new Set(driverPairs.map(([t]) => t))].sort()).toEqual(
      ["lib/ledger", "lib/events/ingest.ts", "lib/deliveries", "lib/dashboard", "lib/rollups", "lib/metrics", "worker"].sort(),
    );
    for (const target of new Set(driverPairs.map(([t]) => t))) {
      const errors = await boundaryErrors(probe(target), `import { Prisma } from "@/lib/generated/prisma/client";\nexport const x = Prisma;\n`);
      expect(errors, target).toEqual([expect.stringContaining(`${target} must not import Prisma`)]);
    }
  });

  it("lets the configuration services and the ledger's own pg module through", async () => {
    expect(await boundaryErrors("lib/subscriptions/__driver_probe.ts", `import { getPrisma } from "../db/prisma";\nexport const x = getPrisma;\n`)).toEqual([]);
    expect(await boundaryErrors("lib/ledger/sql/__driver_probe.ts", `import { getPool } from "../../db/pool";\nexport const x = getPool;\n`)).toEqual([]);
  });
});

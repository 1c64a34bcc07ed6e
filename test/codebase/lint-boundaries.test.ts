// The layering (docs/STYLE.md, "Layers") is enforced by ESLint: each forbidden
// pair in the effective configuration (eslint.config.mjs's zones) is tried through ESLint's Node API on a
// file that does not exist on disk (lintText with a path inside the importing
// folder), importing a real file of the forbidden folder. Written as relative
// paths, as "@/" aliases and as dynamic import(), since the CLI uses all three.
import fs from "node:fs";
import path from "node:path";
import { ESLint } from "eslint";
import { beforeAll, describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const RULE = "import/no-restricted-paths";
let eslint: ESLint;
let pairs: [string, string][] = [];

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
  pairs = options.zones.map((z) => [z.target.replace(/^\.\//, ""), z.from.replace(/^\.\//, "")]);
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

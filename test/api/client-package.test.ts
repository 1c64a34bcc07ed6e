// @hookledger/client as a service outside this repository gets it: the
// committed types are what the OpenAPI document generates; the sources import
// nothing of the server; and the tarball `npm pack` builds in client/ installs
// into an empty project with no dependency fetched, where plain Node (ESM and
// CommonJS) publishes to a real server and TypeScript finds types for both.
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { tokenFor } from "../helpers/api";
import { createApiToken } from "../../lib/auth/tokens";
import { startApiServer, type TestServer } from "../helpers/client-server";
import { createSub } from "../helpers/worker-helpers";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");
const CLIENT = path.join(ROOT, "client");

let tmp: string;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "hookledger-client-package-"));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The environment without npm's own variables: an npm run above this test must not steer the npm runs below (its prefix, its lifecycle). */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  for (const k of Object.keys(env)) if (/^npm_/i.test(k) || k === "INIT_CWD" || k === "NODE_OPTIONS") delete env[k];
  return env;
}

describe("client/src/openapi.ts", () => {
  it("is what npm run client:types generates from the OpenAPI document now", async () => {
    const out = path.join(tmp, "openapi.ts");
    await run(process.execPath, ["bin/run-ts.mjs", "scripts/client-types.ts", "--out", out], { cwd: ROOT, env: cleanEnv(), timeout: 120_000 });
    const generated = fs.readFileSync(out, "utf8");
    expect(generated).toContain('"/api/v1/events"');
    // One line at a time, so a failure names the first lines that differ.
    expect(fs.readFileSync(path.join(CLIENT, "src/openapi.ts"), "utf8").split("\n"), "client/src/openapi.ts is out of date: run `npm run client:types`").toEqual(
      generated.split("\n"),
    );
  });
});

describe("client/ on its own", () => {
  it("imports nothing outside client/src, and declares no dependency", () => {
    const outside: string[] = [];
    for (const f of fs.readdirSync(path.join(CLIENT, "src"))) {
      const src = fs.readFileSync(path.join(CLIENT, "src", f), "utf8");
      for (const m of src.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)["']([^"']+)["']/gm)) {
        const resolved = path.resolve(CLIENT, "src", m[1]);
        if (!m[1].startsWith("./") || path.dirname(resolved) !== path.join(CLIENT, "src")) outside.push(`${f}: ${m[1]}`);
      }
    }
    expect(outside).toEqual([]);
    const pkg = JSON.parse(fs.readFileSync(path.join(CLIENT, "package.json"), "utf8"));
    expect(pkg.dependencies ?? {}).toEqual({});
    expect(pkg.peerDependencies ?? {}).toEqual({});
    expect(pkg.optionalDependencies ?? {}).toEqual({});
  });

  it("tells npm and a registry its terms, the Node it needs, and what it ships", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(CLIENT, "package.json"), "utf8"));
    const root = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));
    // No grant the repository does not make: the root's license where it names one, else npm's word for none.
    expect(pkg.license).toBe(root.license ?? "UNLICENSED");
    expect(pkg.engines?.node).toMatch(/^>=\d+(\.\d+)*$/);
    expect(pkg.files).toEqual(["dist"]);
    // Every entry point a resolver reads is in what ships.
    const targets = (v: unknown): string[] => (typeof v === "string" ? [v] : Object.values(v as object).flatMap(targets));
    const { "./package.json": self, ...entries } = pkg.exports;
    expect(self).toBe("./package.json");
    for (const t of [pkg.main, pkg.types, ...targets(entries)]) expect(t).toMatch(/^\.\/dist\/(esm|cjs)\/index\.(js|d\.ts)$/);
  });
});

describe("the @hookledger/client tarball", () => {
  let db: TestDb;
  let server: TestServer;
  let token: string;
  let project: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApiServer();
    token = await tokenFor(db.prisma, "producer");
    await createSub(db.pool, { id: "sub_pkg", url: "http://127.0.0.1:9/hooks" });

    // npm pack in a copy of client/ (without a dist/ or node_modules/ left from a build by hand), so the
    // tarball is what prepack builds from the sources alone. tsc comes from this repository's node_modules.
    const copy = path.join(tmp, "client");
    fs.cpSync(CLIENT, copy, { recursive: true, filter: (p) => !/[\\/](dist|node_modules)$|\.tgz$/.test(p) });
    const bin = path.join(ROOT, "node_modules/.bin");
    await run("npm", ["pack", "--pack-destination", tmp], {
      cwd: copy,
      env: cleanEnv({ PATH: `${bin}${path.delimiter}${process.env.PATH}` }),
      timeout: 180_000,
    });
    const tarball = fs.readdirSync(tmp).find((f) => f.endsWith(".tgz"));
    expect(tarball).toBe("hookledger-client-0.1.0.tgz");

    project = path.join(tmp, "producer");
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "producer", version: "1.0.0", private: true }));
    // --offline: a dependency to fetch would fail the install here rather than be fetched.
    await run("npm", ["install", path.join(tmp, tarball!), "--offline", "--no-audit", "--no-fund"], { cwd: project, env: cleanEnv(), timeout: 120_000 });
  }, 300_000);
  afterAll(async () => {
    await server?.close();
    await db?.close();
  });

  it("holds the ESM and CommonJS builds with their types, and no sources", () => {
    const installed = path.join(project, "node_modules/@hookledger/client");
    for (const f of ["dist/esm/index.js", "dist/esm/index.d.ts", "dist/cjs/index.js", "dist/cjs/index.d.ts", "dist/cjs/package.json", "README.md"])
      expect(fs.existsSync(path.join(installed, f)), f).toBe(true);
    expect(fs.existsSync(path.join(installed, "src"))).toBe(false);
    // Nothing else was installed: the package brings no dependency.
    expect(fs.readdirSync(path.join(project, "node_modules")).filter((d) => !d.startsWith("."))).toEqual(["@hookledger"]);
  });

  const producer = (imports: string, id: string) => `${imports}
const client = new HookledgerClient({ baseUrl: process.env.HOOKLEDGER_URL, token: process.env.HOOKLEDGER_TOKEN });
(async () => {
  const r = await client.publish({ id: "${id}", type: "assignment.graded", data: { score: 91 }, subject: { tenant: "lincoln", studentId: "stu_pkg" } });
  const refused = await client.subscriptions.list().catch((e) => e);
  console.log(JSON.stringify({ ...r, refused: { isApiError: refused instanceof HookledgerApiError, status: refused.status, code: refused.code } }));
})().catch((e) => { console.error(e); process.exit(1); });
`;

  it.each([
    ["ESM", "producer.mjs", `import { HookledgerApiError, HookledgerClient } from "@hookledger/client";`, "pkg_esm_1"],
    ["CommonJS", "producer.cjs", `const { HookledgerApiError, HookledgerClient } = require("@hookledger/client");`, "pkg_cjs_1"],
  ])("publishes an event from plain Node (%s)", async (_kind, file, imports, id) => {
    fs.writeFileSync(path.join(project, file), producer(imports, id));
    const { stdout } = await run(process.execPath, [file], { cwd: project, env: cleanEnv({ HOOKLEDGER_URL: server.url, HOOKLEDGER_TOKEN: token }), timeout: 30_000 });
    const out = JSON.parse(stdout);
    expect(out).toMatchObject({ eventId: id, created: true, deliveries: [{ subscriptionId: "sub_pkg" }] });
    // The package's HookledgerApiError, from the same build the client came from: a producer token may not list subscriptions.
    expect(out.refused).toEqual({ isApiError: true, status: 403, code: "forbidden" });
    const { rows } = await db.pool.query(
      "SELECT e.id, count(d.*)::int AS deliveries FROM events e JOIN deliveries d ON d.event_id = e.id WHERE e.id = $1 GROUP BY e.id",
      [id],
    );
    expect(rows).toEqual([{ id, deliveries: 1 }]);
  });

  /** README.md's js block whose first line starts with `firstLine`, as a service would copy it. */
  function readmeBlock(firstLine: string): string {
    const readme = fs.readFileSync(path.join(ROOT, "README.md"), "utf8");
    const blocks = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]).filter((b) => b.startsWith(firstLine));
    expect(blocks, `README.md's js block starting "${firstLine}"`).toHaveLength(1);
    return blocks[0];
  }

  it("runs the README's ES module and CommonJS examples as written, from the environment's URL and token", async () => {
    fs.writeFileSync(path.join(project, "readme-esm.mjs"), readmeBlock("// ES modules"));
    fs.writeFileSync(path.join(project, "readme-cjs.cjs"), readmeBlock("// CommonJS"));
    const env = (t: string) => cleanEnv({ HOOKLEDGER_URL: server.url, HOOKLEDGER_TOKEN: t });
    const node = (file: string, t: string) => run(process.execPath, [file], { cwd: project, env: env(t), timeout: 30_000 });

    const esm = await node("readme-esm.mjs", token);
    expect(esm).toMatchObject({ stdout: "created [ 'sub_pkg' ]\n", stderr: "" });
    expect((await node("readme-esm.mjs", token)).stdout).toBe("duplicate [ 'sub_pkg' ]\n");
    // The example's catch: a producer confined to another district is refused with a 403, which it prints.
    await db.pool.query("INSERT INTO tenants (id, name) VALUES ('jefferson', 'Jefferson County')");
    const jefferson = (await createApiToken(db.prisma, { role: "producer", tenantId: "jefferson" })).token;
    const refused = await node("readme-esm.mjs", jefferson);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toMatch(/^refused: 403 forbidden: /);

    expect(await node("readme-cjs.cjs", token)).toMatchObject({ stdout: "created\n", stderr: "" });
    const { rows } = await db.pool.query("SELECT id FROM events WHERE id IN ('evt_1001', 'evt_1002') ORDER BY id");
    expect(rows.map((r) => r.id)).toEqual(["evt_1001", "evt_1002"]);
  });

  it("type-checks the README's ES module example as strict TypeScript", async () => {
    const dir = path.join(project, "readme-ts");
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, "producer.mts"), readmeBlock("// ES modules"));
    // Node's own types (for process.env) from this repository, as a service has them from its @types/node.
    const compilerOptions = { module: "nodenext", target: "ES2022", strict: true, noEmit: true, typeRoots: [path.join(ROOT, "node_modules/@types")], types: ["node"] };
    fs.writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["producer.mts"] }));
    const tsc = path.join(ROOT, "node_modules/typescript/bin/tsc");
    const r = await run(process.execPath, [tsc, "-p", dir], { cwd: dir, env: cleanEnv(), timeout: 120_000 }).catch((e: { stdout: string }) => e);
    expect(r.stdout.split("\n").filter((l) => /error TS/.test(l))).toEqual([]);
  });

  it("gives TypeScript the types for import and for require", async () => {
    const typed = (
      kind: "import" | "require",
    ) => `${kind === "import" ? `import { HookledgerClient, type PublishEventResult } from "@hookledger/client";` : `import { HookledgerClient } from "@hookledger/client";\nimport type { PublishEventResult } from "@hookledger/client";`}
const client = new HookledgerClient({ baseUrl: "http://127.0.0.1:3000", token: "hl_x" });
export const published: Promise<PublishEventResult> = client.publish({ id: "e1", type: "assignment.graded", data: { score: 1 } });
export const state = client.deliveries.get("d1").then((d) => d.state === "dead_letter");
// @ts-expect-error an event without data is refused by the document's schema
client.publish({ id: "e2", type: "assignment.graded" });
// @ts-expect-error a delivery's state is one of the document's states
export const wrong = client.deliveries.get("d1").then((d) => d.state === "lost");
`;
    fs.writeFileSync(path.join(project, "typed.mts"), typed("import"));
    fs.writeFileSync(path.join(project, "typed.cts"), typed("require"));
    fs.writeFileSync(
      path.join(project, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { module: "nodenext", strict: true, noEmit: true, lib: ["ES2022", "DOM"], types: [] }, files: ["typed.mts", "typed.cts"] }),
    );
    const tsc = path.join(ROOT, "node_modules/typescript/bin/tsc");
    const r = await run(process.execPath, [tsc, "-p", project, "--traceResolution"], { cwd: project, env: cleanEnv(), timeout: 120_000 }).catch(
      (e: { stdout: string }) => e,
    );
    const resolved = [...r.stdout.matchAll(/Module name '@hookledger\/client' was successfully resolved to '([^']+)'/g)].map((m) => path.relative(project, m[1]));
    expect(r.stdout.split("\n").filter((l) => /error TS/.test(l))).toEqual([]);
    expect(new Set(resolved)).toEqual(new Set(["node_modules/@hookledger/client/dist/esm/index.d.ts", "node_modules/@hookledger/client/dist/cjs/index.d.ts"]));
  });
});

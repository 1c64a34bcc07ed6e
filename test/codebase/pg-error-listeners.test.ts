// node-postgres reports a connection the server ended (a Postgres restart: FATAL 57P01) as an 'error' event on the
// client, and an 'error' event nobody listens for ends the process. A pool listens on its idle clients only: a client
// checked out of it, or made on its own, needs a listener of its own, for as long as it lives. The chaos suite found a
// worker killed so, by a client checked out without one between two statements of a round. This holds every pg
// connection our processes make to it, by reading the code: every pool gets an 'error' listener where it is made, and
// every connect() has one on the client it gives (lib/db/client.ts's connectGuarded is the way for a pool's).
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { sourceFiles } from "../helpers/source-files";

const ROOT = path.resolve(import.meta.dirname, "../..");
const rel = (p: string) => path.relative(ROOT, p).split(path.sep).join("/");
/** What runs in hookledger's processes (dashboard, worker, CLI); tests, the bench and the chaos harness aside. */
const FILES = ["lib", "worker", "cli", "app", "bin"]
  .flatMap((d) => sourceFiles(path.join(ROOT, d)))
  .concat(["server.ts"].map((f) => path.join(ROOT, f)).filter((f) => fs.existsSync(f)))
  .filter((f) => !/\.test\.tsx?$/.test(f));
/** How far from the connect() (or the pool's making) its listener may be attached, in lines. */
const NEAR = 8;

const isComment = (line: string) => /^\s*(\/\/|\*|\/\*)/.test(line);
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Each connect() and new Pool in `src`, with the name its 'error' listener must be attached to, and whether it is. */
function unguarded(src: string): { line: number; text: string; needs: string }[] {
  const lines = src.split("\n");
  const out: { line: number; text: string; needs: string }[] = [];
  lines.forEach((text, i) => {
    if (isComment(text)) return;
    let needs: string | undefined;
    const made = /(?:const|let)\s+(\w+)\s*=\s*new\s+(?:pg\.)?Pool\(|(this\.\w+)\s*=\s*new\s+(?:pg\.)?Pool\(/.exec(text);
    if (made) needs = made[1] ?? made[2];
    const checkedOut = /(?:const|let)\s+(\w+)\s*=\s*await\s+[\w.]+\.connect\(\)/.exec(text);
    const own = /await\s+([\w.]+)\.connect\(\)/.exec(text);
    if (checkedOut) needs = checkedOut[1];
    else if (own) needs = own[1];
    if (!needs) return;
    const listener = new RegExp(`${escape(needs)}\\.on\\(\\s*["']error["']`);
    const near = lines.slice(Math.max(0, i - NEAR), i + NEAR + 1).filter((l) => !isComment(l));
    if (!near.some((l) => listener.test(l))) out.push({ line: i + 1, text: text.trim(), needs });
  });
  return out;
}

describe("every pg connection our processes make has an 'error' listener", () => {
  it("the rule finds a client checked out of a pool without one, and passes the guarded forms", () => {
    expect(unguarded(`const db = await pool.connect();\ntry { await db.query("SELECT 1"); } finally { db.release(); }`)).toEqual([
      { line: 1, text: "const db = await pool.connect();", needs: "db" },
    ]);
    expect(unguarded(`const c = new pg.Client({});\nawait c.connect();`)).toHaveLength(1);
    expect(unguarded(`this.pool = new pg.Pool({ max: 6 });`)).toEqual([{ line: 1, text: "this.pool = new pg.Pool({ max: 6 });", needs: "this.pool" }]);
    expect(unguarded(`const c = new pg.Client({});\nc.on("error", () => {});\nawait c.connect();`)).toEqual([]);
    expect(unguarded(`const c = await db.connect();\n// why\nc.on("error", ignore);`)).toEqual([]);
    expect(unguarded(`const db = await connectGuarded(pool);`)).toEqual([]);
  });

  it("in lib/, worker/, cli/, app/, bin/ and server.ts", () => {
    const found = FILES.flatMap((f) => unguarded(fs.readFileSync(f, "utf8")).map((u) => `${rel(f)}:${u.line}: ${u.text} (no ${u.needs}.on("error", …) near it)`));
    expect(found, "use connectGuarded/releaseGuarded (lib/db/client.ts) for a pool's client, or attach a listener").toEqual([]);
    // The scan saw the connections there are (so a change of spelling cannot empty it unnoticed).
    const connects = FILES.reduce((n, f) => n + (fs.readFileSync(f, "utf8").match(/\.connect\(\)/g)?.length ?? 0), 0);
    expect(connects).toBeGreaterThanOrEqual(5);
  });
});

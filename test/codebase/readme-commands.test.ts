// Every `npx hookledger …` a README tells someone to type names a command this CLI has, with options it takes:
// a first try of a misspelt one would end in "unknown option" before the reader learns anything. And every file,
// folder and `npm run` script the READMEs and docs/ name is there: a reader sent to a moved file finds nothing.
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

/** Each distinct command path ("token create") with the options the READMEs give it, and where. */
function readmeCommands(): Map<string, { flags: Set<string>; at: string[] }> {
  const out = new Map<string, { flags: Set<string>; at: string[] }>();
  for (const file of ["README.md", "client/README.md"]) {
    fs.readFileSync(path.join(ROOT, file), "utf8")
      .split("\n")
      .forEach((line, i) => {
        for (const m of line.matchAll(/npx hookledger ((?:[a-z][a-z-]*)(?: [a-z][a-z-]*)*)([^`#|)]*)/g)) {
          const command = m[1].trim();
          const entry = out.get(command) ?? { flags: new Set<string>(), at: [] };
          for (const f of m[2].matchAll(/(?:^|[\s[])(--[a-z][a-z-]*)/g)) entry.flags.add(f[1]);
          entry.at.push(`${file}:${i + 1}`);
          out.set(command, entry);
        }
      });
  }
  return out;
}

describe("the READMEs' hookledger commands", () => {
  it("finds the commands the READMEs give (the scan reads them)", () => {
    const commands = readmeCommands();
    expect([...commands.keys()]).toEqual(expect.arrayContaining(["start", "user create", "token create", "tenant create", "publish", "redrive", "secrets rekey"]));
    expect([...commands.get("token create")!.flags].sort()).toEqual(["--name", "--role", "--tenant"]);
  });

  it("each is a command of the CLI, and each option the READMEs give it is one of its options", async () => {
    const wrong: string[] = [];
    for (const [command, { flags, at }] of readmeCommands()) {
      const help = await run(process.execPath, ["bin/hookledger.mjs", ...command.split(" "), "--help"], { cwd: ROOT, timeout: 60_000 }).then(
        (r) => r.stdout,
        (e: { stdout?: string; stderr?: string }) => `${e.stdout ?? ""}${e.stderr ?? ""}`,
      );
      // An unknown subcommand answers its parent's help; only the command's own names it on the usage line.
      if (!help.startsWith(`Usage: hookledger ${command} `)) {
        wrong.push(`${at.join(", ")}: \`hookledger ${command}\` is not a command`);
        continue;
      }
      const options = new Set([...help.matchAll(/^\s+(?:-\w, )?(--[a-z][a-z-]*)/gm)].map((m) => m[1]));
      for (const f of flags) if (!options.has(f)) wrong.push(`${at.join(", ")}: \`hookledger ${command}\` has no ${f}`);
    }
    expect(wrong).toEqual([]);
  }, 300_000);
});

/** The documents a reader is sent through; client/README.md's paths may also be the client package's own. */
const DOCS = [
  "README.md",
  "client/README.md",
  "chaos/README.md",
  ...fs
    .readdirSync(path.join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];
const TOP = "app|bench|bin|chaos|cli|client|components|demo|deploy|docs|e2e|examples|lib|prisma|scripts|test|worker";
/** A repository path, not part of another word, a `$var/`, a package name (`@scope/x`) or a URL. */
const PATH = new RegExp(`(?<![\\w./@$:-])(?:${TOP})/[\\w.()[\\]/-]*`, "g");

/** `app/(dashboard)` keeps its parenthesis; a path closing a parenthesised aside or a sentence does not. */
function trimPath(raw: string): string {
  let p = raw.split("](")[0];
  for (;;) {
    const last = p.at(-1);
    if (last === ")" && p.split("(").length >= p.split(")").length) break;
    if (last === "]" && p.split("[").length >= p.split("]").length) break;
    if (!last || !".,:;)]".includes(last)) break;
    p = p.slice(0, -1);
  }
  return p;
}

/**
 * Each file, folder and npm script a document names that is not there, as "file:line: what". A path with a
 * placeholder after it (`run-<id>.json`, `lib/ledger/*`, `…`) is a pattern, not a path. In a fenced tree (a line
 * that starts with a folder, `  ledger/   the only code…`) a folder is read under the folder above it.
 */
function deadReferences(file: string, text: string): string[] {
  const found: string[] = [];
  const scripts = (dir: string) => (JSON.parse(fs.readFileSync(path.join(ROOT, dir, "package.json"), "utf8")) as { scripts?: Record<string, string> }).scripts ?? {};
  const known = { ...scripts("."), ...(file.startsWith("client/") ? scripts("client") : {}) };
  const exists = (p: string) => fs.existsSync(path.join(ROOT, p)) || (file.startsWith("client/") && fs.existsSync(path.join(ROOT, "client", p)));
  let fenced = false;
  let tree: { indent: number; dir: string }[] = [];
  text.split("\n").forEach((line, i) => {
    const at = `${file}:${i + 1}`;
    if (line.trimStart().startsWith("```")) {
      fenced = !fenced;
      tree = [];
      return;
    }
    for (const m of line.matchAll(PATH)) {
      const next = line[m.index + m[0].length] ?? "";
      if (next && "<*…{".includes(next)) continue;
      const p = trimPath(m[0]);
      if (!exists(p)) found.push(`${at}: ${p} does not exist`);
    }
    for (const m of line.matchAll(/npm run ([a-z][\w:.-]*[\w])/g)) if (!(m[1] in known)) found.push(`${at}: npm run ${m[1]} is not a script`);
    const branch = fenced ? /^( *)([a-z][\w-]*\/)(?: {2,}|$)/.exec(line) : null;
    if (branch) {
      const indent = branch[1].length;
      tree = tree.filter((t) => t.indent < indent);
      const dir = `${tree.at(-1)?.dir ?? ""}${branch[2]}`;
      // A tree's top folders are the repository's; one that is not is no tree (a command's output, say).
      if (tree.length > 0 && !exists(dir)) found.push(`${at}: ${dir} (in the tree) does not exist`);
      tree.push({ indent, dir });
    }
  });
  return found;
}

describe("the files, folders and scripts the READMEs and docs/ name", () => {
  it("finds a dead path, a dead tree folder and a dead script (the scan reads them)", () => {
    const doc = [
      "See `lib/no-such-file.ts` and lib/ledger/gone.ts.",
      "```",
      "lib/   the domain",
      "  ledger/  the ledger",
      "    gone/   nothing",
      "```",
      "Run `npm run no-such-script`.",
    ].join("\n");
    expect(deadReferences("NOTES.txt", doc)).toEqual([
      "NOTES.txt:1: lib/no-such-file.ts does not exist",
      "NOTES.txt:1: lib/ledger/gone.ts does not exist",
      "NOTES.txt:5: lib/ledger/gone/ (in the tree) does not exist",
      "NOTES.txt:7: npm run no-such-script is not a script",
    ]);
    expect(deadReferences("NOTES.txt", "`app/(dashboard)`, (`e2e/phone.spec.ts`), [chaos](chaos/README.md), `chaos/results/run-<id>.json`, `$bin/initdb`.")).toEqual([]);
  });

  it("each one is there", () => {
    expect(DOCS.flatMap((file) => deadReferences(file, fs.readFileSync(path.join(ROOT, file), "utf8")))).toEqual([]);
  });
});

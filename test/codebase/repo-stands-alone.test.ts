// A fresh clone must be readable on its own: no file outside docs/ points at
// the team's notes beside the repository (../shared), at a design document
// that is not in docs/, or at an issue number. Comments say why (docs/STYLE.md
// #14); the design notes they cite live in docs/.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const SELF = "test/codebase/repo-stands-alone.test.ts";

/**
 * Migrations 0001–0012 were applied to existing databases, and lib/db/migrate.ts
 * refuses to start when an applied migration's text (comments included) has
 * changed; their old comments stay. Later migrations are checked like any file.
 */
const CHECKSUMMED_MIGRATION = /^prisma\/migrations\/00(0\d|1[0-2])_[^/]+\/migration\.sql$/;
/** Recorded output and binaries, not prose. */
const NOT_TEXT = /\.(png|jpe?g|gif|ico|woff2?)$|^package-lock\.json$|^(bench|chaos)\/results\//;

const DOC_NAME = /\b(DESIGN|STYLE|PLATFORM|INTERFACES|API|SCALING)\.md\b/g;
const ISSUE_REFERENCES = [/\b(issues?|pr|pull request)\s*#?\d+/i, /\(#\d+\)/, /\bsee #\d+/i];
const SHARED = /\.\.\/shared\b|\bshared\/design\b/;

function trackedFiles(): string[] {
  return execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" })
    .split("\0")
    .filter((f) => f && !f.startsWith("docs/") && f !== SELF && !NOT_TEXT.test(f) && !CHECKSUMMED_MIGRATION.test(f))
    .filter((f) => fs.existsSync(path.join(ROOT, f)));
}

type Finding = string;

function scan(file: string, text: string): Finding[] {
  const found: Finding[] = [];
  text.split("\n").forEach((line, i) => {
    const at = `${file}:${i + 1}`;
    if (SHARED.test(line)) found.push(`${at} cites the notes outside the repository: ${line.trim()}`);
    for (const m of line.matchAll(DOC_NAME)) {
      const before = line.slice(0, m.index);
      const after = line.slice(m.index + m[0].length);
      // docs/DESIGN.md, a Markdown link [DESIGN.md](docs/DESIGN.md), or the docs/ line of a directory tree.
      const inDocs = before.endsWith("docs/") || after.startsWith(`](docs/${m[0]})`) || after.startsWith(`](./docs/${m[0]})`) || /^\s*docs\/\s/.test(line);
      const home = m[0] === "INTERFACES.md" ? "API.md" : m[0];
      if (!inDocs) found.push(`${at} cites ${m[0]} outside docs/ (write docs/${home}): ${line.trim()}`);
      else if (!fs.existsSync(path.join(ROOT, "docs", m[0]))) found.push(`${at} cites docs/${m[0]}, which does not exist: ${line.trim()}`);
    }
    if (ISSUE_REFERENCES.some((re) => re.test(line))) found.push(`${at} cites an issue number; say why instead: ${line.trim()}`);
  });
  return found;
}

describe("the repository stands alone", () => {
  it("the scan recognises each kind of reference", () => {
    expect(scan("x.ts", "// see ../shared/design/DESIGN.md")).toHaveLength(2);
    expect(scan("x.ts", "// invariant 2 (DESIGN.md)")).toHaveLength(1);
    expect(scan("x.ts", "// INTERFACES.md: the CLI")).toHaveLength(1);
    expect(scan("x.ts", "// docs/INTERFACES.md: the CLI")).toHaveLength(1);
    expect(scan("x.ts", "// the fix for issue 6; see also (#12)")).toHaveLength(1);
    expect(scan("x.ts", "-- Redrive batches (issue #5)")).toHaveLength(1);
    expect(scan("x.ts", "// docs/DESIGN.md invariant 2; docs/STYLE.md #5")).toEqual([]);
    expect(scan("x.md", "see [DESIGN.md](docs/DESIGN.md)")).toEqual([]);
    expect(scan("README.md", "docs/         design notes: DESIGN.md, STYLE.md")).toEqual([]);
  });

  it("no tracked file outside docs/ cites ../shared, a design note outside docs/, or an issue number", () => {
    const files = trackedFiles();
    expect(files.length).toBeGreaterThan(100);
    const found = files.flatMap((f) => scan(f, fs.readFileSync(path.join(ROOT, f), "utf8")));
    expect(found).toEqual([]);
  });
});

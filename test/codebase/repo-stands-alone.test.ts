// A fresh clone must be readable on its own: no file outside docs/ points at
// the team's notes beside the repository (../shared), at a design document
// that is not in docs/, or at an issue number. Comments say why (docs/STYLE.md
// #14); the design notes they cite live in docs/, and what a citation names
// there is there: the file, a section ("docs/DESIGN.md, Retention", a quoted
// heading or bold lead-in), an invariant or practice by number, a step.
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

const DOC_NAME = /\b(DESIGN|STYLE|PLATFORM|INTERFACES|API|SCALING|GLOSSARY)\.md\b/g;
/** Any docs/ file by name, so a note that was never written (or was renamed) is caught too; DOC_NAME's are checked above. */
const DOCS_FILE = /\bdocs\/([A-Za-z0-9_-]+\.md)\b/g;
const KNOWN_DOC = new RegExp(`^${DOC_NAME.source}$`);
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
    for (const m of line.matchAll(DOCS_FILE))
      if (!KNOWN_DOC.test(m[1]) && !fs.existsSync(path.join(ROOT, "docs", m[1]))) found.push(`${at} cites docs/${m[1]}, which does not exist: ${line.trim()}`);
    if (ISSUE_REFERENCES.some((re) => re.test(line))) found.push(`${at} cites an issue number; say why instead: ${line.trim()}`);
  });
  return [...found, ...scanSections(file, text)];
}

/** Text as it reads: no Markdown emphasis or code marks, one space for any run of whitespace, lower case. */
const plain = (s: string) => s.replace(/[`*]/g, "").replace(/\s+/g, " ").trim().toLowerCase();

type DocOutline = { sections: string[]; invariants: Set<number>; practices: Set<number>; steps: Set<number> };
const outlines = new Map<string, DocOutline | null>();
/** How many citations of a part of a docs/ file the scan checked: a pattern that stopped matching would check none. */
let partsChecked = 0;

/** What a citation may name in a docs/ file: its headings and bold or italic lead-ins, the numbered invariants (DESIGN) and practices (STYLE), the steps (SCALING). */
function outline(doc: string): DocOutline | null {
  if (!outlines.has(doc)) {
    const file = path.join(ROOT, "docs", doc);
    if (!fs.existsSync(file)) outlines.set(doc, null);
    else {
      const text = fs.readFileSync(file, "utf8");
      const headings = [...text.matchAll(/^#+\s+(.+)$/gm)].map((m) => m[1]);
      const emphasis = [...text.replace(/\n(?!\n)/g, " ").matchAll(/\*\*([^*]+)\*\*|(?<![*\w])\*([^*\s][^*]*)\*(?![*\w])/g)].map((m) => m[1] ?? m[2]);
      const numbered = (heading: RegExp) => {
        const at = text.search(heading);
        if (at < 0) return new Set<number>();
        const next = text.slice(at + 1).search(/^## /m);
        const part = next < 0 ? text.slice(at) : text.slice(at, at + 1 + next);
        return new Set([...part.matchAll(/^(\d+)\. \*\*/gm)].map((m) => Number(m[1])));
      };
      outlines.set(doc, {
        sections: [...headings, ...emphasis].map(plain),
        invariants: numbered(/^## The \w+ invariants/m),
        practices: numbered(/^## Practices/m),
        steps: new Set([...text.matchAll(/^## Step (\d+)\b/gm)].map((m) => Number(m[1]))),
      });
    }
  }
  return outlines.get(doc)!;
}

/**
 * Citations of a part of a docs/ file, read across a comment's line breaks:
 * "docs/DESIGN.md, Retention", "docs/SCALING.md, \"Removing a month\"" (a heading or a bold or italic lead-in that
 * starts so, any case), "docs/DESIGN.md invariants 1 and 4", "docs/STYLE.md #6", "docs/SCALING.md step 1". A name
 * that does not start with a capital letter ("docs/STYLE.md, layering") is prose, not a section, and is not checked.
 */
function scanSections(file: string, text: string): Finding[] {
  const flat = text.replace(/\s*\n\s*(?:--|\/\/|\*(?!\*)|#(?!#))?\s*/g, " ");
  const found: Finding[] = [];
  const cite =
    /\bdocs\/([A-Za-z0-9_-]+\.md)(?:,?\s*\(?["“]([^"”]{2,120})["”]|,\s*([A-Z][A-Za-z' -]*?)(?=\s*[).;:,]|$)|\s+invariants?\s+(\d+(?:(?:,\s*|\s+and\s+)\d+)*)|\s+#(\d+)|\s+step\s+(\d+))/g;
  for (const m of flat.matchAll(cite)) {
    const [, doc, quoted, named, invariants, practice, step] = m;
    const o = outline(doc);
    if (!o) continue; // the file itself is missing: reported above
    partsChecked++;
    const section = quoted ?? named;
    if (section !== undefined) {
      const want = plain(section);
      if (!o.sections.some((s) => s.startsWith(want))) found.push(`${file} cites docs/${doc}, "${section}": no heading or lead-in of docs/${doc} says so`);
    }
    for (const n of invariants?.match(/\d+/g) ?? []) if (!o.invariants.has(Number(n))) found.push(`${file} cites docs/${doc} invariant ${n}, which it does not have`);
    if (practice !== undefined && !o.practices.has(Number(practice))) found.push(`${file} cites docs/${doc} #${practice}, which it does not have`);
    if (step !== undefined && !o.steps.has(Number(step))) found.push(`${file} cites docs/${doc} step ${step}, which it does not have`);
  }
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
    // A docs/ file that does not exist, whatever its name; a bare GLOSSARY.md.
    expect(scan("x.ts", "/** The ladder (docs/DELIVERY.md). */")).toHaveLength(1);
    expect(scan("x.ts", "// the words of GLOSSARY.md")).toHaveLength(1);
    // Sections, invariants, practices and steps that exist, also across a comment's line break.
    expect(scan("x.ts", "// (docs/DESIGN.md, Retention): the statements")).toEqual([]);
    expect(scan("x.ts", '// (docs/DESIGN.md,\n// "Which driver for what").')).toEqual([]);
    expect(scan("x.sql", '-- stall the drain (docs/SCALING.md, "Removing a month").')).toEqual([]);
    expect(scan("x.ts", "// docs/DESIGN.md invariants 1, 3 and 9; docs/STYLE.md #14; docs/SCALING.md step 1")).toEqual([]);
    expect(scan("x.ts", "// (docs/STYLE.md, layering)")).toEqual([]);
    // And ones that do not.
    expect(scan("x.ts", "// (docs/DESIGN.md, Unicorns): nothing")).toHaveLength(1);
    expect(scan("x.sql", '-- (docs/SCALING.md, "Draining a month with a mop").')).toHaveLength(1);
    expect(scan("x.ts", "// docs/DESIGN.md invariants 1 and 11; docs/STYLE.md #99; docs/SCALING.md step 9")).toHaveLength(3);
  });

  it("no tracked file outside docs/ cites ../shared, a design note outside docs/, or an issue number", () => {
    const files = trackedFiles();
    expect(files.length).toBeGreaterThan(100);
    partsChecked = 0;
    const found = files.flatMap((f) => scan(f, fs.readFileSync(path.join(ROOT, f), "utf8")));
    expect(found).toEqual([]);
    expect(partsChecked).toBeGreaterThan(50);
  });

  it("the notes in docs/ cite parts of each other that exist", () => {
    const notes = fs.readdirSync(path.join(ROOT, "docs")).filter((f) => f.endsWith(".md"));
    expect(notes.length).toBeGreaterThan(4);
    expect(notes.flatMap((f) => scanSections(`docs/${f}`, fs.readFileSync(path.join(ROOT, "docs", f), "utf8")))).toEqual([]);
  });
});

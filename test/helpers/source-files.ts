// The application's source files below a folder, for the codebase tests that hold the code to a rule by reading it
// (one home for the session cookie, for a subscription's state, for server-only imports). Dependencies, Prisma's
// generated client and dot-folders are not ours to hold to anything.
import { readdirSync, statSync } from "node:fs";
import path from "node:path";

/** Every file below `dir` whose name matches `names` (default: .ts, .tsx and .mjs), skipping node_modules, generated and dot-folders. */
export function sourceFiles(dir: string, names: RegExp = /\.(ts|tsx|mjs)$/): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name === "generated" || name.startsWith(".")) continue;
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p, names));
    else if (names.test(name)) out.push(p);
  }
  return out;
}

// Every `npx hookledger …` a README tells someone to type names a command this CLI has, with options it takes:
// a first try of a misspelt one would end in "unknown option" before the reader learns anything.
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

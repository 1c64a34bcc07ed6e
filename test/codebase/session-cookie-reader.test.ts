// A browser may send two `hl_session` cookies (a framed portal's partitioned one beside a person's), and parsers
// disagree on which of two same-named cookies they keep: parseCookies the first, Next's request cookies and
// cookies() the last. So the proxy, the API and server components read the session cookie through one rule,
// sessionCookieOf in lib/auth/cookies.ts, and nothing else reads it by name. This walks the application code and fails
// on a read of the session cookie anywhere else.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { sourceFiles } from "../helpers/source-files";

const ROOT = path.resolve(import.meta.dirname, "../..");
const WALKED = ["app", "components", "lib", "worker", "cli"];
const HOME = "lib/auth/cookies.ts";

/** Reads of the session cookie by its name: an index into parsed cookies, a jar's get, the literal name. */
function sessionReads(text: string): string[] {
  const found: string[] = [];
  for (const re of [/\[\s*SESSION_COOKIE\s*\]/g, /\.get(All)?\(\s*SESSION_COOKIE\s*\)/g, /["'`]hl_session["'`]/g]) for (const m of text.matchAll(re)) found.push(m[0]);
  return found;
}

describe("where the session cookie is read", () => {
  it(`only ${HOME} reads hl_session by name; everything else goes through sessionCookieOf`, () => {
    const files = [...WALKED.flatMap((d) => sourceFiles(path.join(ROOT, d))), path.join(ROOT, "proxy.ts")].map((f) => path.relative(ROOT, f)).filter((f) => f !== HOME);
    const offences = files.flatMap((f) => sessionReads(readFileSync(path.join(ROOT, f), "utf8")).map((o) => `${f}: ${o}`));
    expect(offences).toEqual([]);
  });

  it("catches the reads it is there for", () => {
    expect(sessionReads('parseCookies(h)[SESSION_COOKIE]; req.cookies.get(SESSION_COOKIE)?.value; jar.get("hl_session")')).toHaveLength(3);
  });
});

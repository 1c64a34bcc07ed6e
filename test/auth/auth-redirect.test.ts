// The sign-in `next` parameter must never send the browser off the site: every
// variant a URL parser normalises (tab, newline, backslash, scheme, encoding)
// is resolved against a fixed origin and only a same-origin path survives.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call } from "../helpers/api";
import { createUser } from "../../lib/auth/users";
import { handleSignIn, safeNext } from "../../lib/auth/signin";

/** Redirect targets an attacker would try; each must stay on the site. */
export const HOSTILE_NEXT = [
  "/\t/evil.example",
  "/\n/evil.example",
  "/\r\n/evil.example",
  "\t//evil.example",
  " //evil.example",
  "//evil.example",
  "///evil.example",
  "/\\evil.example",
  "\\\\evil.example",
  "/\\/evil.example",
  "/.//evil.example",
  "/..//evil.example",
  "https://evil.example/",
  "HTTPS:evil.example",
  "http:/evil.example",
  "javascript:alert(1)",
  "JaVaScRiPt:alert(1)",
  "data:text/html,<script>alert(1)</script>",
  "/%09/evil.example",
  "%2F%2Fevil.example",
  "/%2F%2Fevil.example",
  "/%5Cevil.example",
  "https:%2F%2Fevil.example",
  "/@evil.example",
  "//user@evil.example",
  "//evil.example%2F..",
];

const SITE = "http://hookledger.test";

/** Where a browser at SITE would actually go for this Location or window.location.assign() value. */
function landsOn(next: string): URL {
  return new URL(next, SITE + "/signin");
}

describe("safeNext", () => {
  it.each(HOSTILE_NEXT)("keeps %j on the site", (next) => {
    const out = safeNext(next);
    expect(out.startsWith("/")).toBe(true);
    expect(landsOn(out).origin).toBe(SITE);
    // Re-resolving the answer (as the browser does) must not leave the site either.
    expect(landsOn(safeNext(out)).origin).toBe(SITE);
  });

  it("keeps a local path with its query and hash", () => {
    expect(safeNext("/deliveries?state=dead_lettered#top")).toBe("/deliveries?state=dead_lettered#top");
    expect(safeNext("/subscriptions/sub_1")).toBe("/subscriptions/sub_1");
    expect(safeNext(undefined)).toBe("/");
    expect(safeNext("")).toBe("/");
  });
});

describe("POST /api/auth/signin with a hostile next", () => {
  let db: TestDb;
  beforeAll(async () => {
    db = await createTestDatabase();
    await createUser(db.prisma, { email: "redirect@hq.example", role: "support", password: "correct horse battery" });
  });
  afterAll(async () => db?.close());

  it("the form post's 303 and the JSON answer's next stay on the site", async () => {
    for (const next of HOSTILE_NEXT.slice(0, 8)) {
      const body = new URLSearchParams({ email: "redirect@hq.example", password: "correct horse battery", next }).toString();
      const r = await call(handleSignIn, {
        rawBody: body,
        headers: { "content-type": "application/x-www-form-urlencoded", origin: "http://localhost", host: "localhost" },
      });
      expect(r.status, JSON.stringify(next)).toBe(303);
      expect(landsOn(r.headers.get("location")!).origin, JSON.stringify(next)).toBe(SITE);
    }
    const j = await call(handleSignIn, {
      path: "/api/auth/signin",
      body: { email: "redirect@hq.example", password: "correct horse battery", next: "/\t/evil.example" },
      headers: { origin: "http://localhost", host: "localhost" },
    });
    expect(j.status, j.text).toBe(200);
    expect(landsOn(j.json.next).origin).toBe(SITE);
  });
});

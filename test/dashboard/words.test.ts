import { describe, expect, it } from "vitest";
import { actorFromWords, actorInWords, count, listInWords, noun, num, possessive } from "@/lib/words";

describe("numbers in words", () => {
  it("groups thousands the same way whatever the process's locale", () => {
    // The server renders with its own locale and the browser hydrates with the viewer's: both must print this.
    expect(num(1234567)).toBe("1,234,567");
    expect(num(0)).toBe("0");
  });

  it("counts with the singular for one and the plural otherwise", () => {
    expect(count(1, "attempt")).toBe("1 attempt");
    expect(count(0, "attempt")).toBe("0 attempts");
    expect(count(1234, "delivery", "deliveries")).toBe("1,234 deliveries");
    expect(noun(2, "delivery is", "deliveries are")).toBe("deliveries are");
    expect(noun(1, "address", "addresses")).toBe("address");
  });
});

describe("a list in a sentence", () => {
  it("joins with commas and the last with and/or, no comma before it", () => {
    expect(listInWords([], "and")).toBe("");
    expect(listInWords(["admins"], "and")).toBe("admins");
    expect(listInWords(["engineers", "admins"], "and")).toBe("engineers and admins");
    expect(listInWords(["a manager", "an engineer", "an admin"], "or")).toBe("a manager, an engineer or an admin");
    expect(listInWords(["a", "b", "c", "d"], "and")).toBe("a, b, c and d");
  });
});

describe("possessive", () => {
  it("adds an apostrophe alone after a final s", () => {
    expect(possessive("Lincoln USD")).toBe("Lincoln USD's");
    expect(possessive("Jefferson County Schools")).toBe("Jefferson County Schools'");
  });
});

describe("who did it", () => {
  it("names a user by address, a token and a portal by what they are, and the schedule as hookledger", () => {
    expect(actorInWords("user:ana@lincoln.example")).toBe("ana@lincoln.example");
    expect(actorInWords("token:deploy:prod")).toBe("API token “deploy:prod”");
    expect(actorInWords("portal:lincoln")).toBe("the district portal of lincoln");
    expect(actorInWords("system")).toBe("hookledger");
    expect(actorInWords("cli:ops@host-1")).toBe("the command line (ops@host-1)");
    expect(actorInWords("someone")).toBe("someone");
  });
});

describe("who did it, typed into the audit page's actor filter", () => {
  it("takes back the words the Actor column shows, so a district can copy them into the filter", () => {
    for (const stored of ["token:deploy:prod", "portal:lincoln", "system", "cli:ops@host-1"]) expect(actorFromWords(actorInWords(stored))).toBe(stored);
    // A user shows as its address, which the filter finds inside "user:…".
    // What the stored form already matches is left as typed: an email, "portal", a token's name.
    expect(actorFromWords("  ana@lincoln.example ")).toBe("ana@lincoln.example");
    expect(actorFromWords("portal")).toBe("portal");
    expect(actorFromWords("api token “deploy”")).toBe("token:deploy");
  });
});

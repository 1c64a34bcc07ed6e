// The event catalog's schema patterns run on every publish of their type, in
// the server's event loop: they are matched by RE2 (re2js), in time linear in
// the input, never by a backtracking RegExp (lib/catalog/json-schema.ts).
import { describe, expect, it } from "vitest";
import { compileSchema, schemaIssues } from "../../lib/catalog/json-schema";

function validator(schema: unknown) {
  const c = compileSchema(schema);
  if (!("validate" in c)) throw new Error(c.error);
  return c.validate;
}

describe("schema patterns", () => {
  it("match as JSON Schema says: anywhere in the string unless anchored, each property by its own pattern", () => {
    const v = validator({
      type: "object",
      properties: { term_id: { type: "string", pattern: "^\\d{4}-(fall|spring)$" }, note: { type: "string", pattern: "grade" } },
      patternProperties: { "^x-": { type: "integer" } },
    });
    expect(schemaIssues(v, { term_id: "2026-fall", note: "regraded", "x-count": 2 })).toEqual([]);
    expect(schemaIssues(v, { term_id: "fall-2026", note: "none", "x-count": "two" })).toEqual([
      { path: "/term_id", message: 'must match pattern "^\\d{4}-(fall|spring)$"' },
      { path: "/note", message: 'must match pattern "grade"' },
      { path: "/x-count", message: "must be integer" },
    ]);
  });

  it("a pattern that backtracks exponentially in JavaScript is answered at once", () => {
    // With RegExp, ^(a+)+$ against forty a's and a "!" tries about 2^40 ways before it fails: hours, with the event loop stopped.
    const v = validator({ type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } } });
    expect(schemaIssues(v, { s: `${"a".repeat(40)}!` })).toEqual([{ path: "/s", message: 'must match pattern "^(a+)+$"' }]);
    expect(schemaIssues(v, { s: "a".repeat(40) })).toEqual([]);
  });

  it("a pattern RE2 cannot run in linear time (a backreference, a lookahead) does not compile: the schema is refused when saved", () => {
    for (const pattern of ["^(a)\\1$", "^(?=a)a$"]) {
      const c = compileSchema({ type: "string", pattern });
      expect("error" in c, pattern).toBe(true);
    }
  });
});

// The demo catalogues its three event types with schemas; its traffic must always meet them, or the demo's own
// publishes would be refused with 422 at the API and its story (one district refusing a grade without term_id)
// would happen at publish instead of at the district.
import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { DEMO_EVENT_TYPES } from "../../demo/event-types";
import { buildRoster, generateEvent } from "../../demo/catalog";
import { compileSchema, schemaIssues } from "../../lib/catalog/json-schema";

function validators() {
  const out = new Map<string, Exclude<ReturnType<typeof compileSchema>, { error: string }>["validate"]>();
  for (const t of DEMO_EVENT_TYPES) {
    const c = compileSchema(t.schema);
    if ("error" in c) throw new Error(`${t.type}: ${c.error}`);
    out.set(t.type, c.validate);
  }
  return out;
}

it("every demo event type's schema compiles and its example matches it", () => {
  const v = validators();
  for (const t of DEMO_EVENT_TYPES) expect(schemaIssues(v.get(t.type)!, t.example), t.type).toEqual([]);
});

it("the demo's generated traffic (with and without term_id) matches the demo catalog, type by type", () => {
  const v = validators();
  const roster = buildRoster("lincoln", 10);
  const seen = new Set<string>();
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (let i = 0; i < 3000; i++) {
    const e = generateEvent(roster, "t", i, { missingTermIdRate: 0.3 }, rnd);
    const validate = v.get(e.type);
    expect(validate, `uncatalogued demo type ${e.type}`).toBeDefined();
    expect(schemaIssues(validate!, e.data), `${e.type} ${JSON.stringify(e.data)}`).toEqual([]);
    seen.add(e.type);
  }
  expect([...seen].sort()).toEqual(DEMO_EVENT_TYPES.map((t) => t.type).sort());
});

it("a grade missing a required field is refused by the demo's schema (the schema checks something)", () => {
  const v = validators();
  const { studentId: _dropped, ...rest } = DEMO_EVENT_TYPES[0].example as Record<string, unknown>;
  expect(schemaIssues(v.get("assignment.graded")!, rest)).toEqual([expect.objectContaining({ path: expect.stringContaining("studentId") })]);
});

// Someone trying the README's curl calls, its client examples or examples/publish.ts against `npm run demo` publishes
// into this catalog: an example the demo refuses with 422 teaches the wrong shape.
it("the READMEs' and examples/publish.ts's assignment.graded publishes meet the demo catalog", () => {
  const v = validators();
  const found: Record<string, number> = {};
  for (const file of ["README.md", "client/README.md", "examples/publish.ts"]) {
    const text = readFileSync(file, "utf8");
    const publishes = [
      // A JavaScript object literal: type "assignment.graded" followed by its data.
      ...[...text.matchAll(/type: "assignment\.graded",\s*data: (\{[^{}]*\})/g)].map((m) => [m[1], new Function(`return (${m[1]});`)() as unknown] as const),
      // A curl body's JSON.
      ...[...text.matchAll(/"type":\s*"assignment\.graded",\s*"data":\s*(\{[^{}]*\})/g)].map((m) => [m[1], JSON.parse(m[1]) as unknown] as const),
    ];
    for (const [source, data] of publishes) expect(schemaIssues(v.get("assignment.graded")!, data), `${file}: ${source}`).toEqual([]);
    found[file] = publishes.length;
  }
  // Two curl calls and two client examples in README.md, the client's own README's one, the example's two.
  expect(found).toEqual({ "README.md": 4, "client/README.md": 1, "examples/publish.ts": 2 });
});

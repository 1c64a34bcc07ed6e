// JSON Schema (2020-12) for the event catalog, with ajv: compiling a schema when it is saved (a schema that does not
// compile is a 400 naming ajv's message), and validating a publish's `data` against it. Compiling generates code and
// takes milliseconds, so compiled validators are kept, keyed by type and the catalog row's updated_at: a publish
// compiles nothing, and an edited schema gets a new key.
import "server-only";
import Ajv2020, { type ErrorObject, type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { RE2JS } from "re2js";
import { memoized } from "../memo";

/** One way `data` fails its schema: a JSON Pointer to the value and what is wrong with it. */
export type SchemaIssue = { path: string; message: string };

/** Issues reported per value at most: enough to fix a payload, bounded for a hostile one. */
const MAX_ISSUES = 20;
/** Compiled validators kept (one per catalogued type and version); emptied when full. */
const MAX_VALIDATORS = 1_000;

/**
 * A fresh instance per compile: schemas with the same $id would otherwise collide in one instance's registry, and
 * compiling happens only when a schema is saved or first used after a change. strict: unknown keywords (a misspelt
 * "requried") and ambiguous numbers are refused when the schema is saved, not ignored silently; strictTypes and
 * strictRequired are left to the author (they only warn about style).
 */
function newAjv(): Ajv2020 {
  const ajv = new Ajv2020({
    strict: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    allErrors: true,
    allowUnionTypes: true,
    logger: false,
    code: { regExp: linearRegExp },
  });
  addFormats(ajv);
  return ajv;
}

/**
 * The schemas' `pattern` and `patternProperties` run on every publish of their type, in the server's event loop.
 * JavaScript's RegExp backtracks: `^(a+)+$` against forty a's and a `!` runs for hours and stalls every request of the
 * process. RE2 (re2js, a port in JavaScript) matches in time linear in the input; a pattern it does not take (a
 * backreference, a lookaround) makes the schema fail to compile, a 400 when it is saved. `toString` is ajv's key for
 * sharing one compiled pattern between the places a schema uses it, so it must tell patterns apart.
 */
const linearRegExp = Object.assign(
  (pattern: string) => {
    const re = RE2JS.compile(pattern);
    return { test: (s: string) => re.test(s), toString: () => `re2:${pattern}` };
  },
  { code: "re2js" },
);

/** Compiles `schema`: the validator, or ajv's message for why it does not compile. */
export function compileSchema(schema: unknown): { validate: ValidateFunction } | { error: string } {
  try {
    return { validate: newAjv().compile(schema as object) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

const compiled = new Map<string, ValidateFunction | null>();

/**
 * The validator for a catalog row's schema, compiled once per type and version. null when a stored schema does not
 * compile (it was checked when saved, so only a validator upgrade could do that): such a type is published unchecked
 * rather than refused, and the caller logs it.
 */
export function validatorFor(type: string, version: number, schema: unknown): ValidateFunction | null {
  return memoized(
    compiled,
    `${type}@${version}`,
    () => {
      const c = compileSchema(schema);
      return "validate" in c ? c.validate : null;
    },
    MAX_VALIDATORS,
  );
}

function issueOf(e: ErrorObject): SchemaIssue {
  const p = e.params as Record<string, unknown>;
  const at = (key: unknown) => `${e.instancePath}/${String(key).replace(/~/g, "~0").replace(/\//g, "~1")}`;
  if (e.keyword === "required") return { path: at(p.missingProperty), message: "is required" };
  if (e.keyword === "additionalProperties" || e.keyword === "unevaluatedProperties")
    return { path: at(p.additionalProperty ?? p.unevaluatedProperty), message: "is not allowed" };
  if (e.keyword === "dependentRequired") return { path: at(p.missingProperty), message: `is required when ${String(p.property)} is present` };
  return { path: e.instancePath, message: e.message ?? `fails ${e.keyword}` };
}

/** Validates `value`: [] when it matches, else each issue with its JSON Pointer (relative to `value`). */
export function schemaIssues(validate: ValidateFunction, value: unknown): SchemaIssue[] {
  if (validate(value)) return [];
  return (validate.errors ?? []).slice(0, MAX_ISSUES).map(issueOf);
}

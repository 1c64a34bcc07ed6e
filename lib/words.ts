// Numbers in words, for the dashboard, the notices and the CLI alike.
//
// Always en-US grouping: a page is rendered on the server and then hydrated in
// the browser, and a bare toLocaleString() formats with whichever locale each
// side has (1,234 on one, 1.234 on the other), which React reports as a
// hydration mismatch. ESLint refuses a bare toLocaleString() for that reason.

/** 1234 → "1,234". */
export function num(n: number): string {
  return n.toLocaleString("en-US");
}

/** The noun for n of it: noun(1, "delivery", "deliveries") → "delivery"; the plural defaults to one + "s". */
export function noun(n: number, one: string, many = `${one}s`): string {
  return n === 1 ? one : many;
}

/** n and its noun: count(1234, "delivery", "deliveries") → "1,234 deliveries"; count(1, "attempt") → "1 attempt". */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${num(n)} ${noun(n, one, many)}`;
}

/**
 * "a, b and c" / "a, b or c": a list as a sentence says it. en-GB, whose lists have no comma before the last "and"
 * (en-US writes "a, b, and c"), as every sentence here is written.
 */
export function listInWords(xs: readonly string[], word: "and" | "or"): string {
  return (word === "and" ? AND_LIST : OR_LIST).format(xs);
}
const AND_LIST = new Intl.ListFormat("en-GB", { type: "conjunction" });
const OR_LIST = new Intl.ListFormat("en-GB", { type: "disjunction" });

/** "Lincoln USD's", "Jefferson County Schools'": a name that ends in s takes the apostrophe alone. */
export function possessive(name: string): string {
  return /s$/i.test(name) ? `${name}'` : `${name}'s`;
}

/**
 * Who did it, as a reader says it: "ana@lincoln.example" (a user), "API token “deploy”", "the district portal of
 * lincoln", "the command line (ops@host)", "hookledger" (its own schedule). The audit page keeps the stored form, which its filter takes.
 */
export function actorInWords(actor: string): string {
  const [kind, ...rest] = actor.split(":");
  const name = rest.join(":");
  if (!name) return actor === "system" ? "hookledger" : actor;
  if (kind === "user") return name;
  if (kind === "token") return `API token “${name}”`;
  if (kind === "portal") return `the district portal of ${name}`;
  if (kind === "cli") return `the command line (${name})`;
  return actor;
}

/**
 * What the audit page's actor filter looks for, from what a person typed: the stored form as it is ("user:ana@…",
 * a bare email, "portal"), or the words the Actor column shows for a district (actorInWords), copied back into the
 * filter, taken to the stored form they came from.
 */
export function actorFromWords(typed: string): string {
  const t = typed.trim();
  const m =
    /^API token [“"](.+)[”"]$/i.exec(t)?.map((x, i) => (i ? `token:${x}` : x)) ??
    /^(?:the )?district portal of (.+)$/i.exec(t)?.map((x, i) => (i ? `portal:${x}` : x)) ??
    /^(?:the )?command line \((.+)\)$/i.exec(t)?.map((x, i) => (i ? `cli:${x}` : x));
  if (m) return m[1];
  return t.toLowerCase() === "hookledger" ? "system" : t;
}

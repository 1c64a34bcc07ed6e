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

/** "Lincoln USD's", "Jefferson County Schools'": a name that ends in s takes the apostrophe alone. */
export function possessive(name: string): string {
  return /s$/i.test(name) ? `${name}'` : `${name}'s`;
}

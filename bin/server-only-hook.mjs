// Node module hook for the processes that are not Next.js (the worker, the CLI,
// the demo, bench and chaos): `import "server-only"` resolves to an empty module.
// The marker keeps database, secret and SQL modules out of browser bundles, and
// Next.js enforces it at build time; the `server-only` package itself throws
// unless imported under the `react-server` condition, which only Next's server
// bundles use. These processes are server code by definition, so for them the
// marker means nothing. vitest.config.ts maps it the same way for the tests.
export async function resolve(specifier, context, nextResolve) {
  if (specifier === "server-only") return { url: "data:text/javascript,", shortCircuit: true };
  return nextResolve(specifier, context);
}

// ESLint: Next.js's rules (React, hooks, a11y, @next/next, typescript-eslint's
// recommended set) plus the layering the tree is built on (docs/STYLE.md,
// "Layers"). The boundary rule is eslint-plugin-import's no-restricted-paths,
// which eslint-config-next already registers together with a TypeScript
// resolver: it judges the file an import RESOLVES to, so `@/worker/x`,
// `../../worker/x` and `await import("../worker/x")` are all caught, and a
// file named worker-helpers.ts is not. Core no-restricted-imports matches the
// written specifier only and skips dynamic import(), which the CLI uses.
import { defineConfig, globalIgnores } from "eslint/config";
import nextVitals from "eslint-config-next/core-web-vitals";
import nextTypescript from "eslint-config-next/typescript";

/** Who may not import whom. Each entry: the importing folder, the folders it must not reach, and why. */
export const LAYERS = [
  {
    target: "lib",
    from: ["app", "components", "worker", "cli", "demo", "bench", "chaos"],
    why: "lib/ is the domain shared by the dashboard, the worker and the CLI; it depends on none of them.",
  },
  {
    target: "components",
    from: ["app", "worker", "cli", "demo", "bench", "chaos"],
    why: "components/ are React views; they take data from lib/ and props, never from a page or a process.",
  },
  {
    target: "worker",
    from: ["app", "components", "cli", "demo"],
    why: "the worker is a process of its own over lib/; the dashboard, the CLI and the demo start it, not the other way round.",
  },
  {
    target: "app",
    from: ["worker", "cli", "demo", "bench", "chaos"],
    why: "the dashboard talks to the worker through the ledger in Postgres, never by importing it.",
  },
];

/**
 * Which driver for what (docs/DESIGN.md): the ledger, its read model and the hot paths (the worker's claim and
 * result write, the HTTP ingest) run on `pg`; Prisma serves the configuration tables and the schema model. These
 * folders and files must not import Prisma; a ledger statement that must commit with Prisma's writes receives the
 * caller's transaction as a LedgerDb (lib/ledger/read/db.ts) instead.
 */
export const DRIVER = {
  targets: ["lib/ledger", "lib/events/ingest.ts", "lib/deliveries", "lib/dashboard", "lib/rollups", "lib/metrics", "worker"],
  from: ["lib/generated/prisma", "lib/db/prisma.ts", "node_modules/@prisma"],
  why: "the ledger and the hot paths run on pg (lib/db/pool.ts); Prisma is for the configuration tables (docs/DESIGN.md, Which driver for what).",
};

const boundaries = {
  name: "hookledger/layers",
  files: ["**/*.{js,jsx,mjs,ts,tsx,mts,cts}"],
  rules: {
    "import/no-restricted-paths": [
      "error",
      {
        basePath: import.meta.dirname,
        zones: [
          ...LAYERS.flatMap(({ target, from, why }) => from.map((f) => ({ target: `./${target}`, from: `./${f}`, message: `${target}/ must not import ${f}/: ${why}` }))),
          ...DRIVER.targets.flatMap((target) =>
            DRIVER.from.map((f) => ({ target: `./${target}`, from: `./${f}`, message: `${target} must not import Prisma (${f}): ${DRIVER.why}` })),
          ),
        ],
      },
    ],
  },
};

/** Rule settings that follow habits the code keeps on purpose. */
const habits = [
  {
    name: "hookledger/habits",
    rules: {
      // `{ n: _n, ...rest }` drops a field on purpose; an underscore marks a name kept unused on purpose.
      "@typescript-eslint/no-unused-vars": [
        "warn",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrorsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_", ignoreRestSiblings: true },
      ],
      // The dashboard renders the server's UTC first and switches to the viewer's zone after mount;
      // that one setState in an effect is the hydration-safe way, so it is a warning to look at, not an error.
      "react-hooks/set-state-in-effect": "warn",
    },
  },
  {
    // Pages and layouts are async server components rendered once per request (force-dynamic):
    // Date.now() there is the request's time, which is what they pass down as "as of".
    name: "hookledger/server-components",
    files: ["app/**/page.tsx", "app/**/layout.tsx"],
    rules: { "react-hooks/purity": "off" },
  },
  {
    // A page renders on the server, then hydrates in the browser: a number formatted in "the" locale is
    // 1,234 on one side and 1.234 on the other, and React reports the mismatch. lib/words.ts formats en-US.
    name: "hookledger/one-locale",
    files: ["app/**", "components/**", "lib/**"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: "CallExpression[callee.property.name=/^toLocale(String|DateString|TimeString)$/][arguments.length=0]",
          message: "Name the locale (num() and count() in lib/words.ts): server and browser locales differ, and the hydrated text must match.",
        },
      ],
    },
  },
  {
    // A function that does not fit on a few screens does several things; split it into named parts.
    name: "hookledger/function-size",
    files: ["app/**", "components/**", "lib/**", "worker/**", "cli/**", "demo/**", "chaos/**", "bench/**"],
    rules: { "max-lines-per-function": ["error", { max: 150, skipBlankLines: false, skipComments: false }] },
  },
  {
    // Tests read untyped JSON answers and reach into handlers generically.
    name: "hookledger/tests",
    files: ["test/**", "e2e/**"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
];

export default defineConfig([
  ...nextVitals,
  ...nextTypescript,
  ...habits,
  boundaries,
  globalIgnores([
    ".next/**",
    "out/**",
    "build/**",
    "next-env.d.ts",
    "lib/generated/**",
    "client/dist/**",
    "client/src/openapi.ts",
    ".data/**",
    "test-results/**",
    "playwright-report/**",
  ]),
]);

import type { KnipConfig } from "knip";

// `npx knip` (part of `npm run lint`): no unused file, export, type or dependency. The Next, Vitest, Playwright,
// ESLint, PostCSS and Prisma plugins find their own entry points; the ones below are run by path (bin/hookledger.mjs,
// bin/run-ts.mjs, a spawn or a fork) where no plugin can see them.
const config: KnipConfig = {
  workspaces: {
    ".": {
      entry: [
        "server.ts",
        "bin/*.mjs",
        "scripts/*.{ts,mjs}",
        "worker/main.ts",
        "bench/*.ts",
        // The peer comparison's queue processes, spawned by bench/peers/run.ts.
        "bench/peers/pg-boss.ts",
        "bench/peers/graphile-worker.ts",
        "chaos/run.ts",
        "chaos/repro-*.ts",
        "chaos/receiver-process.ts",
        // Run by the tests through bin/run-ts.mjs.
        "examples/*.ts",
        "test/fixtures/*.ts",
      ],
      project: ["**/*.{ts,tsx,mjs,css,prisma}", "!client/**"],
    },
    client: {
      project: ["src/**/*.{ts,css}"],
    },
  },
  // app/globals.css imports Tailwind (`@import "tailwindcss"`); this hands knip the CSS file's imports.
  compilers: {
    css: (text: string) => [...text.matchAll(/(?<=@)import[^;]+/g)].join("\n"),
  },
  ignoreIssues: {
    // Written by `npm run client:types` (openapi-typescript).
    "client/src/openapi.ts": ["types"],
  },
  ignoreDependencies: [
    // Imported only by the Prisma client that `prisma generate` writes to lib/generated (gitignored, so unseen).
    "@prisma/client",
    // server.ts loads these with createRequire (they have no types), which knip does not follow.
    "async-exit-hook",
    "compression",
  ],
  // Test helpers make a throwaway PKI with the system's openssl command, not an npm package.
  ignoreBinaries: ["openssl"],
};

export default config;

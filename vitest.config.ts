import { defineConfig } from "vitest/config";
import path from "node:path";

export default defineConfig({
  resolve: {
    alias: [
      { find: /^@\//, replacement: `${path.resolve(import.meta.dirname)}/` },
      // Tests run server code in plain Node, where the server-only package throws (it is empty only under
      // Next's react-server condition); bin/server-only-hook.mjs does the same for the worker and the CLI.
      { find: /^server-only$/, replacement: path.resolve(import.meta.dirname, "node_modules/server-only/empty.js") },
    ],
  },
  test: {
    include: ["test/**/*.test.ts", "lib/**/*.test.ts", "worker/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    // Each file runs in its own process and gets its own database (test/helpers/db.ts).
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    maxWorkers: 2,
  },
});

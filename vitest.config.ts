import { defineConfig } from "vitest/config";
import path from "node:path";

export default defineConfig({
  resolve: { alias: { "@": path.resolve(import.meta.dirname) } },
  test: {
    include: ["test/**/*.test.ts", "lib/**/*.test.ts", "worker/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    // Each file runs in its own process and gets its own database (test/db.ts).
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    maxWorkers: 2,
  },
});

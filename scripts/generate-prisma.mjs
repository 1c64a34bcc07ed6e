// Generates the Prisma client into lib/generated/prisma.
// The Prisma CLI insists on a schema-engine binary that the npm registry does
// not carry; `prisma generate` never runs it, so any existing file satisfies
// the check (docs/PLATFORM.md). Migrations are applied by our own runner.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import path from "node:path";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const env = {
  ...process.env,
  PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? process.execPath,
  PRISMA_HIDE_UPDATE_MESSAGE: "1",
  CHECKPOINT_DISABLE: "1",
};
const r = spawnSync(process.execPath, [path.join(root, "node_modules/prisma/build/index.js"), "generate"], {
  cwd: root,
  env,
  stdio: "inherit",
});
if (r.status !== 0) {
  console.error("prisma generate failed; see the output above.");
  process.exit(r.status ?? 1);
}

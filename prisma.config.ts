import { defineConfig } from "prisma/config";

// Migrations are plain SQL applied by `hookledger migrate` (lib/db/migrate.ts);
// the Prisma CLI is used only to generate the client (see docs/PLATFORM.md: its
// schema engine is not available offline).
export default defineConfig({
  schema: "prisma/schema.prisma",
});

// The audit vocabulary is one typed list (lib/audit.ts): the writer refuses an
// action's details that do not match its schema (and writes nothing), and
// every action that SQL writes from inside ledger statements is in the list
// (calls from TypeScript are held to it by the writer's type).
import { readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUDIT_ACTIONS, AUDIT_TARGET_TYPES, isAuditAction, writeAudit, type AuditAction } from "../../lib/audit";
import { createTestDatabase, type TestDb } from "../helpers/db";

const ROOT = path.resolve(import.meta.dirname, "../..");

function files(dir: string, exts: string[]): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (name === "node_modules" || name === "generated") continue;
    if (statSync(p).isDirectory()) out.push(...files(p, exts));
    else if (exts.some((e) => name.endsWith(e))) out.push(p);
  }
  return out;
}

/** Action literals in `INSERT INTO audit_entries …` statements: the quoted dotted names within the statement. */
function sqlAuditActions(): { file: string; action: string }[] {
  const found: { file: string; action: string }[] = [];
  const sources = [...files(path.join(ROOT, "worker"), [".ts"]), ...files(path.join(ROOT, "lib"), [".ts"]), ...files(path.join(ROOT, "prisma", "migrations"), [".sql"])];
  for (const file of sources) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/INSERT\s+INTO\s+audit_entries\b/gi)) {
      // The statement's text up to its end (a semicolon, a closing CTE paren at line start, or a template end).
      const rest = text.slice(m.index!, m.index! + 1500);
      const stmt = rest.split(/;|`|\n\s*\)/)[0];
      for (const a of stmt.matchAll(/'([a-z_]+(?:\.[a-z_]+)+)'/g)) found.push({ file: path.relative(ROOT, file), action: a[1] });
    }
  }
  return found;
}

describe("audit actions", () => {
  it("every action written by SQL is in the typed list, with a target type from the list", () => {
    const found = sqlAuditActions();
    // The worker's 410 handling writes one from its result statement: the scan must see it.
    expect(found.map((f) => f.action)).toContain("subscription.disable");
    for (const f of found) expect(isAuditAction(f.action), `${f.file} writes ${f.action}`).toBe(true);
    for (const [action, spec] of Object.entries(AUDIT_ACTIONS)) expect(AUDIT_TARGET_TYPES, action).toContain(spec.target);
  });

  describe("writeAudit", () => {
    let db: TestDb;
    beforeAll(async () => {
      db = await createTestDatabase();
    });
    afterAll(async () => {
      await db?.close();
    });

    it("writes a row whose details match the action's schema", async () => {
      await db.prisma.$transaction((tx) =>
        writeAudit(tx, { actor: "user:a@example.test", action: "token.create", targetType: "api_token", targetId: "tok_1", details: { name: "sis", role: "producer" } }),
      );
      const rows = await db.prisma.auditEntry.findMany({ where: { targetId: "tok_1" } });
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ action: "token.create", targetType: "api_token", details: { name: "sis", role: "producer" } });
    });

    it("refuses details that do not match, an unknown action or the wrong target type, and the transaction writes nothing", async () => {
      const before = await db.prisma.auditEntry.count();
      const bad: { action: string; targetType: string; details: unknown }[] = [
        { action: "token.create", targetType: "api_token", details: { name: "sis" } },
        { action: "token.create", targetType: "api_token", details: { name: "sis", role: "producer", secret: "whsec_x" } },
        { action: "token.made", targetType: "api_token", details: {} },
        { action: "token.create", targetType: "token", details: { name: "sis", role: "producer" } },
      ];
      for (const b of bad) {
        await expect(
          db.prisma.$transaction(async (tx) => {
            await tx.$executeRawUnsafe("INSERT INTO audit_entries (actor, action, target_type, target_id) VALUES ('probe', 'probe.ran', 'user', 'p')");
            // Cast: the type already refuses these; this checks the runtime guard for untyped callers.
            await writeAudit(tx, { actor: "probe", targetId: "x", ...(b as unknown as { action: AuditAction; targetType: "api_token"; details: never }) });
          }),
        ).rejects.toThrow();
      }
      expect(await db.prisma.auditEntry.count()).toBe(before);
    });

    it("a global action's row never names a tenant: no subscription for the database to take one from, and a tenant given is refused", async () => {
      const globals = Object.entries(AUDIT_ACTIONS).filter(([, spec]) => "global" in spec);
      expect(globals.map(([a]) => a)).toEqual(expect.arrayContaining(["event_type.create", "retention.run", "notifications.settings.update"]));
      // migration 0020's trigger fills tenant_id from the subscription a row names as its target or details.subscriptionId.
      for (const [action, spec] of globals) {
        expect(spec.target, action).not.toBe("subscription");
        expect(Object.keys(spec.details.shape), action).not.toContain("subscriptionId");
      }
      const before = await db.prisma.auditEntry.count();
      await expect(
        db.prisma.$transaction((tx) =>
          writeAudit(tx, {
            actor: "probe",
            action: "event_type.create",
            targetType: "event_type",
            targetId: "x.y",
            details: { description: "", hasSchema: false },
            tenantId: "lincoln",
          }),
        ),
      ).rejects.toThrow(/global/);
      expect(await db.prisma.auditEntry.count()).toBe(before);
    });
  });
});

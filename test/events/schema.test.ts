// schema.prisma and the SQL migrations must agree: every model is written with
// every field set and read back through Prisma, and every mapped column exists.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import fs from "node:fs";
import { deliveryKey } from "../../lib/ledger/delivery-key";
import { listMigrations } from "../../lib/db/migrate";

type Field = { name: string; type: string; isList: boolean; dbName: string };

/** The scalar fields of each model in schema.prisma, with their @map and @@map names. */
function parseSchema(text: string): { name: string; dbName: string; fields: Field[] }[] {
  const models = [...text.matchAll(/^model (\w+) \{([\s\S]*?)^\}/gm)];
  expect(models.length).toBeGreaterThan(5);
  return models.map(([, name, body]) => {
    const fields: Field[] = [];
    for (const line of body.split("\n").map((l) => l.trim())) {
      const m = line.match(/^(\w+)\s+(\w+)(\[\])?\??(.*)$/);
      if (!m || !["String", "Int", "BigInt", "Boolean", "DateTime", "Json", "Bytes"].includes(m[2])) continue;
      const map = m[4].match(/@map\("(\w+)"\)/);
      fields.push({ name: m[1], type: m[2], isList: Boolean(m[3]), dbName: map ? map[1] : m[1] });
    }
    const tableMap = body.match(/@@map\("(\w+)"\)/);
    return { name, dbName: tableMap ? tableMap[1] : name, fields };
  });
}

let db: TestDb;
beforeAll(async () => (db = await createTestDatabase()));
afterAll(async () => db?.close());

describe("Prisma model vs migrated database", () => {
  it("every model field maps to an existing column of a compatible type", async () => {
    const { rows } = await db.pool.query<{ table_name: string; column_name: string; data_type: string }>(
      "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = 'public'",
    );
    const cols = new Map(rows.map((r) => [`${r.table_name}.${r.column_name}`, r.data_type]));
    const typeFor: Record<string, string[]> = {
      String: ["text"],
      Int: ["integer"],
      BigInt: ["bigint"],
      Boolean: ["boolean"],
      DateTime: ["timestamp with time zone"],
      Json: ["jsonb"],
      Bytes: ["bytea"],
    };
    const problems: string[] = [];
    for (const model of parseSchema(fs.readFileSync("prisma/schema.prisma", "utf8"))) {
      const table = model.dbName;
      for (const f of model.fields) {
        const col = `${table}.${f.dbName}`;
        const t = cols.get(col);
        if (!t) problems.push(`${model.name}.${f.name}: column ${col} missing`);
        else if (f.isList ? t !== "ARRAY" : !typeFor[f.type]?.includes(t)) problems.push(`${model.name}.${f.name}: ${f.type} vs ${t}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("writes and reads back a row of every model", async () => {
    const p = db.prisma;
    const now = new Date("2026-11-29T10:00:00.000Z");
    await p.subscription.create({
      data: {
        id: "sub_schema",
        name: "Lincoln USD",
        tenant: "lincoln",
        url: "https://example.test/hook",
        eventTypes: ["assignment.graded"],
        state: "paused",
        stateReason: "test",
        retryPolicy: { ladderSeconds: [1, 2] },
        rateLimitPerSecond: 5,
        maxConcurrency: 3,
        secrets: { create: { id: "sec_1", secret: "whsec_x", expiresAt: now } },
      },
    });
    await p.event.create({
      data: {
        id: "evt_1",
        type: "assignment.graded",
        payload: Buffer.from('{"a":1}'),
        occurredAt: now,
        tenant: "lincoln",
        subject: { studentId: "s1" },
        subjectValues: ["s1"],
        createdAt: now,
      },
    });
    const d = await p.delivery.create({
      data: {
        deliveryKey: deliveryKey("sub_schema", "evt_1"),
        eventId: "evt_1",
        eventAt: now,
        subscriptionId: "sub_schema",
        eventType: "assignment.graded",
        state: "dead_letter",
        attemptCount: 1,
        totalAttempts: 1,
        leaseOwner: "w",
        leaseUntil: now,
        lastAttemptAt: now,
        lastStatusCode: 422,
        lastErrorClass: "http_4xx",
        lastErrorMessage: "missing term_id",
        deadLetterReason: "http_422",
        deadLetteredAt: now,
        deliveredAt: null,
      },
    });
    expect(d.id).toMatch(/^dlv_[0-9a-f]{26}$/);
    await p.attempt.create({
      data: {
        deliveryId: d.id,
        subscriptionId: "sub_schema",
        attemptNumber: 1,
        trigger: "scheduled",
        actor: null,
        startedAt: now,
        durationMs: 12,
        outcome: "dead_letter",
        statusCode: 422,
        errorClass: "http_4xx",
        errorMessage: "x",
        retryAfterSeconds: 3,
        responseHeaders: { a: "b" },
        responseExcerpt: "missing term_id",
        workerId: "w1",
        ambiguous: true,
      },
    });
    await p.auditEntry.create({ data: { actor: "system", action: "x", targetType: "delivery", targetId: d.id, reason: "r", details: { n: 1 } } });
    await p.apiToken.create({ data: { id: "tok_1", name: "t", role: "admin", tokenHash: "h", lastUsedAt: now } });
    await p.workerHeartbeat.create({ data: { workerId: "w1", hostname: "h", pid: 1 } });

    const back = await p.delivery.findUniqueOrThrow({
      where: { id: d.id },
      include: { attempts: true, event: true, subscription: { include: { secrets: true } } },
    });
    expect(back.subscription.retryPolicy).toEqual({ ladderSeconds: [1, 2] });
    expect(back.subscription.secrets[0].expiresAt?.toISOString()).toBe(now.toISOString());
    expect(Buffer.from(back.event.payload).toString()).toBe('{"a":1}');
    expect(back.attempts[0]).toMatchObject({ ambiguous: true, retryAfterSeconds: 3, responseHeaders: { a: "b" } });
    expect(back.deadLetterReason).toBe("http_422");
    expect((await p.auditEntry.findFirstOrThrow()).details).toEqual({ n: 1 });
    expect((await p.apiToken.findFirstOrThrow()).role).toBe("admin");
    expect((await p.workerHeartbeat.findFirstOrThrow()).pid).toBe(1);
  });

  it("records every migration on disk as applied", async () => {
    const { rows } = await db.pool.query("SELECT name FROM _hookledger_migrations ORDER BY name");
    expect(rows.map((r) => r.name)).toEqual(listMigrations().map((m) => m.name));
  });
});

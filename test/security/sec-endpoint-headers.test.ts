// Endpoint header names the HTTP client or hookledger itself owns: Expect
// (undici refuses to send it, so every delivery would fail), User-Agent and the
// test-send marker. Each is a 400 on create and update that writes nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { writeCounts } from "../helpers/endpoint-auth-helpers";
import * as subs from "../../app/api/v1/subscriptions/route";
import * as sub from "../../app/api/v1/subscriptions/[id]/route";

let db: TestDb;
let manager: string;
beforeAll(async () => {
  db = await createTestDatabase();
  manager = await tokenFor(db.prisma, "manager");
});
afterAll(async () => db?.close());

describe("reserved endpoint header names", () => {
  const base = { name: "Reserved", url: "https://reserved.example.test/h", eventTypes: ["assignment.graded"] };
  const cases: [string, Record<string, string>, RegExp][] = [
    ["Expect", { Expect: "100-continue" }, /Expect cannot be set/],
    ["expect (any case)", { eXpEcT: "100-continue" }, /cannot be set/],
    ["User-Agent", { "User-Agent": "district-gateway/1.0" }, /User-Agent cannot be set/],
    ["hookledger-test", { "hookledger-test": "0" }, /hookledger-test cannot be set/],
  ];
  it.each(cases)("%s: a 400 on create and update that writes nothing", async (_what, headers, message) => {
    const before = await writeCounts(db.pool);
    const created = await call(subs.POST, { token: manager, body: { ...base, headers } });
    expect(created.status, created.text).toBe(400);
    expect(created.text).toMatch(message);
    const patched = await call(sub.PATCH, { method: "PATCH", token: manager, params: { id: "sub_lincoln" }, body: { headers } });
    expect(patched.status, patched.text).toBe(400);
    expect(patched.text).toMatch(message);
    expect(await writeCounts(db.pool)).toEqual(before);
  });
});

// A request that asks the database for more than it does in a request's time (statement_timeout, 10 s on the
// dashboard's pool and Prisma's) is stopped by the server with SQLSTATE 57014. The API answers it as a 503 that says
// so and what to do, never the 500 "internal error" a fault in the code gets. The errors are real: statements the
// server stopped, through pg and through Prisma.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { toErrorResponse } from "../../lib/api/handler";
import { isDatabaseUnavailable, isStatementTimeout } from "../../lib/db/unavailable";

let db: TestDb;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.close());

/** A statement stopped at a 50 ms statement timeout, as pg and as Prisma report it. */
async function stopped(): Promise<{ pg: unknown; prisma: unknown }> {
  const c = await db.pool.connect();
  let pgErr: unknown;
  try {
    await c.query("SET statement_timeout = 50");
    pgErr = await c.query("SELECT pg_sleep(2)").catch((e: unknown) => e);
  } finally {
    c.release(new Error("discard: its statement_timeout was changed"));
  }
  const prismaErr = await db.prisma
    .$transaction(async (tx) => {
      await tx.$executeRawUnsafe("SET LOCAL statement_timeout = 50");
      await tx.$queryRawUnsafe("SELECT pg_sleep(2)");
    })
    .catch((e: unknown) => e);
  return { pg: pgErr, prisma: prismaErr };
}

describe("a statement stopped at the statement timeout", () => {
  it("is a 503 saying the request asked for more than the database does in a request's time, from pg and from Prisma", async () => {
    const errs = await stopped();
    for (const [via, err] of Object.entries(errs)) {
      expect(isStatementTimeout(err), `${via}: ${String(err)}`).toBe(true);
      expect(isDatabaseUnavailable(err), via).toBe(false);
      const res = toErrorResponse(err);
      expect(res.status, via).toBe(503);
      expect(await res.json()).toEqual({
        error: {
          code: "unavailable",
          message: expect.stringMatching(/^The database did not finish this request in the time a request has \(10 seconds\).*Ask for less/),
          details: { statementTimeoutSeconds: 10 },
        },
      });
    }
  });

  it("a statement cancelled otherwise (an operator's pg_cancel_backend) and other errors are not taken for one", async () => {
    expect(isStatementTimeout(new Error("canceling statement due to statement timeout"))).toBe(false);
    expect(isStatementTimeout(Object.assign(new Error("canceling statement due to user request"), { code: "57014" }))).toBe(false);
    expect(isStatementTimeout(Object.assign(new Error("duplicate key"), { code: "23505" }))).toBe(false);
    expect(toErrorResponse(new TypeError("x")).status).toBe(500);
  });
});

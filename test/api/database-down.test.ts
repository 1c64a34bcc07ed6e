// The API while its database is stopped or restarting: a 503 `unavailable`
// with Retry-After and words that name the database, never the 500
// "internal error" a code fault gets. A real embedded PostgreSQL of this
// file's own, stopped under it: the errors are the ones Prisma and pg give
// (a query cut by the fast shutdown: 57P01; then nothing listening).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { scratchServer } from "../../lib/db/embedded";
import { createPrisma, setPrisma, type PrismaClient } from "../../lib/db/prisma";
import { toErrorResponse } from "../../lib/api/handler";
import { call } from "../helpers/api";
import * as subscriptions from "../../app/api/v1/subscriptions/route";
import * as events from "../../app/api/v1/events/route";

let server: { url: string; stop: () => Promise<void> };
let prisma: PrismaClient;
let pool: pg.Pool;
/** What a query under way got when the server shut down. */
const cut: { prisma?: unknown; pg?: unknown } = {};

beforeAll(async () => {
  server = await scratchServer("hl-db-down-");
  prisma = createPrisma(server.url);
  setPrisma(prisma);
  pool = new pg.Pool({ connectionString: server.url });
  pool.on("error", () => {});
  const sleeping = [prisma.$queryRaw`SELECT pg_sleep(30)`.catch((e: unknown) => (cut.prisma = e)), pool.query("SELECT pg_sleep(30)").catch((e: unknown) => (cut.pg = e))];
  await new Promise((r) => setTimeout(r, 500));
  await server.stop();
  await Promise.all(sleeping);
});

afterAll(async () => {
  setPrisma(undefined);
  await prisma?.$disconnect().catch(() => {});
  await pool?.end().catch(() => {});
});

function expectUnavailable(res: Response | { status: number; headers: Headers; json: unknown }, body: unknown) {
  expect(res.status).toBe(503);
  expect(res.headers.get("retry-after")).toBe("5");
  expect(body).toMatchObject({ error: { code: "unavailable", message: expect.stringMatching(/cannot reach its database/) } });
}

describe("the API while the database is down", () => {
  it("a query cut by the server's shutdown (57P01) is a 503, from Prisma and from pg", async () => {
    // The server's FATAL 57P01 usually reaches the client first; on a busy machine the socket's close can, and the
    // query then fails as "Connection terminated unexpectedly". Either is what a producer's request meets: both a 503.
    expect(String((cut.prisma as Error).message)).toMatch(/57P01|terminating connection|Connection terminated/);
    for (const err of [cut.prisma, cut.pg]) {
      const res = toErrorResponse(err);
      expectUnavailable(res, await res.json());
    }
  });

  it("nothing listening (ECONNREFUSED, Prisma's P1001) is a 503", async () => {
    const refused = await pool.query("SELECT 1").catch((e: unknown) => e);
    const p1001 = await prisma.apiToken.findFirst().catch((e: unknown) => e);
    expect((refused as { code?: string }).code).toBe("ECONNREFUSED");
    expect((p1001 as { code?: string }).code).toBe("P1001");
    for (const err of [refused, p1001]) {
      const res = toErrorResponse(err);
      expectUnavailable(res, await res.json());
    }
  });

  it("a route (its token lookup fails first) answers 503, for a read and for a publish", async () => {
    const list = await call(subscriptions.GET, { path: "/api/v1/subscriptions", token: "hl_not_checkable_now" });
    expectUnavailable(list, list.json);
    const publish = await call(events.POST, {
      path: "/api/v1/events",
      token: "hl_not_checkable_now",
      body: { id: "evt_down_1", type: "assignment.graded", data: {}, subject: { tenant: "lincoln" } },
    });
    expectUnavailable(publish, publish.json);
  });

  it("a code fault is still a 500", async () => {
    expect(toErrorResponse(new TypeError("x is undefined")).status).toBe(500);
    expect(toErrorResponse(Object.assign(new Error("duplicate key"), { code: "23505" })).status).toBe(500);
  });
});

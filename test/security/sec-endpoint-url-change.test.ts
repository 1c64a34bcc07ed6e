// Endpoint headers are credentials for the URL they were saved with. The
// worker keeps a subscription's opened headers and client certificate for a
// few seconds, but every claim reads the URL afresh: without a check that ties
// the two together, a PATCH that moves the URL to another host (and drops the
// headers, as the API demands) would send the old Authorization value to the
// new host until the cache expired. Here events flow through a real worker
// while the URL changes, and the new host must never see the old values; a
// change of the headers alone must reach the wire at once as well.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { seedEvents, startReceiver, waitFor, worker, type Receiver } from "../helpers/worker-helpers";
import * as subs from "../../app/api/v1/subscriptions/route";
import * as sub from "../../app/api/v1/subscriptions/[id]/route";
import type { DeliveryWorker } from "../../worker/worker";

const OLD_TOKEN = `old_${randomBytes(12).toString("hex")}`;
const OLD_KEY = `oldkey_${randomBytes(12).toString("hex")}`;
const NEW_TOKEN = `new_${randomBytes(12).toString("hex")}`;
const THIRD_TOKEN = `third_${randomBytes(12).toString("hex")}`;

let db: TestDb;
let manager: string;
let oldHost: Receiver;
let newHost: Receiver;
let thirdHost: Receiver;
let w: DeliveryWorker | undefined;
let producing = false;
let producer: Promise<void> | undefined;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const patch = (body: Record<string, unknown>) => call(sub.PATCH, { method: "PATCH", token: manager, params: { id: "sub_moving" }, body });

beforeAll(async () => {
  process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS = "1";
  db = await createTestDatabase();
  manager = await tokenFor(db.prisma, "manager");
  await db.prisma.tenant.create({ data: { id: "lincoln", name: "Lincoln USD" } });
  // Two ports of 127.0.0.1: two origins, as two districts' hosts would be.
  oldHost = await startReceiver();
  newHost = await startReceiver();
  thirdHost = await startReceiver();
  const r = await call(subs.POST, {
    token: manager,
    body: {
      id: "sub_moving",
      name: "Moving gateway",
      url: oldHost.url,
      eventTypes: ["assignment.graded"],
      tenant: "lincoln",
      headers: { Authorization: `Bearer ${OLD_TOKEN}`, "X-Api-Key": OLD_KEY },
    },
  });
  expect(r.status, r.text).toBe(201);
  w = worker(db.url);
  // A steady stream, so claims run (and the cache is warm) at every moment of the change.
  producing = true;
  producer = (async () => {
    for (let i = 0; producing; i++) {
      await seedEvents(db.pool, `evt_mv_${i}_`, 3, ["sub_moving"], "lincoln");
      await sleep(30);
    }
  })();
});

afterAll(async () => {
  producing = false;
  await producer;
  await w?.stop();
  await oldHost?.close();
  await newHost?.close();
  await thirdHost?.close();
  await db?.close();
});

const carries = (r: { headers: Record<string, unknown> }, value: string) => JSON.stringify(r.headers).includes(value);

describe("the worker sends a subscription's credentials only with the URL they were saved for", () => {
  it("a URL moved to another host with the headers dropped: the new host never sees the old ones", async () => {
    await waitFor(async () => oldHost.received.length >= 20, 20_000, "the old host to receive deliveries");
    expect(oldHost.received.every((r) => carries(r, OLD_TOKEN) && carries(r, OLD_KEY))).toBe(true);

    const moved = await patch({ url: newHost.url, headers: null });
    expect(moved.status, moved.text).toBe(200);
    // Past the worker's cache lifetime (5 s), so every cached entry of the old state has had its chance.
    await sleep(6_500);

    expect(newHost.received.length).toBeGreaterThan(20);
    const leaked = newHost.received.filter((r) => carries(r, OLD_TOKEN) || carries(r, OLD_KEY));
    expect(leaked.length, `requests to the new host with the old credentials (of ${newHost.received.length})`).toBe(0);
    expect(newHost.received.some((r) => r.headers.authorization !== undefined)).toBe(false);
  });

  it("new headers on the same URL go out with the next claim, not after the cache expires", async () => {
    const changed = await patch({ headers: { Authorization: `Bearer ${NEW_TOKEN}` } });
    expect(changed.status, changed.text).toBe(200);
    const at = Date.now();
    await sleep(3_000);
    // Requests claimed before the change may still be on the wire for a moment; after that, every one carries the new value.
    const later = newHost.received.filter((r) => r.at > at + 1_000);
    expect(later.length).toBeGreaterThan(10);
    const stale = later.filter((r) => r.headers.authorization !== `Bearer ${NEW_TOKEN}`);
    expect(stale.length, `requests sent more than 1 s after the change without the new header (of ${later.length})`).toBe(0);
    expect(newHost.received.some((r) => carries(r, OLD_TOKEN) || carries(r, OLD_KEY))).toBe(false);
  });

  it("a URL moved again with new headers: neither host sees the other's value", async () => {
    const before = newHost.received.length;
    const moved = await patch({ url: thirdHost.url, headers: { Authorization: `Bearer ${THIRD_TOKEN}` } });
    expect(moved.status, moved.text).toBe(200);
    await sleep(6_500);
    expect(thirdHost.received.length).toBeGreaterThan(20);
    // Rows claimed before the move and sent after it must not take the third host's value to the second host either.
    expect(newHost.received.slice(before).filter((r) => carries(r, THIRD_TOKEN))).toHaveLength(0);
    expect(thirdHost.received.filter((r) => r.headers.authorization !== `Bearer ${THIRD_TOKEN}`)).toHaveLength(0);
  });
});

// examples/verify-receiver.ts run as its own process, receiving a real delivery
// from an in-process worker: the district side of signing, checked end to end.
import { spawn, type ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { tokenFor } from "../helpers/api";
import { startApiServer, type TestServer } from "../helpers/client-server";
import { createSub, settled, waitFor, worker } from "../helpers/worker-helpers";
import { HookledgerClient } from "../../client/src/index";
import { generateSecret } from "../../lib/subscriptions/secrets";
import type { DeliveryWorker } from "../../worker/worker";

let db: TestDb;
let server: TestServer;
let child: ChildProcess;
let out = "";
let w: DeliveryWorker | undefined;
const secret = generateSecret();

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startApiServer();
  child = spawn(process.execPath, ["bin/run-ts.mjs", "examples/verify-receiver.ts"], {
    env: { ...process.env, WEBHOOK_SECRET: secret, PORT: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (out += c.toString()));
}, 60_000);
afterAll(async () => {
  await w?.stop();
  child?.kill("SIGTERM");
  await server?.close();
  await db?.close();
});

describe("examples/verify-receiver.ts", () => {
  it("verifies a real hookledger delivery, acknowledges a redelivery without applying it, and rejects a forgery", async () => {
    const port = Number((await waitFor(async () => out.match(/LISTENING (\d+)/), 30_000, "the receiver"))[1]);
    await createSub(db.pool, { id: "sub_district", url: `http://127.0.0.1:${port}/hooks`, secrets: [secret] });
    const client = new HookledgerClient({ baseUrl: server.url, token: await tokenFor(db.prisma, "producer") });
    const r = await client.publish({ id: "evt_verify_1", type: "assignment.graded", data: { studentId: "stu_1", score: 97 } });
    expect(r.created).toBe(true);
    w = worker(db.url);
    const d = await settled(db.pool, "sub_district", "evt_verify_1");
    expect(d.state).toBe("delivered");
    await waitFor(async () => out.includes(`verified ${d.delivery_key} event evt_verify_1 type assignment.graded`), 5_000, "the verified line");

    // A resend carries the same webhook-id (the delivery key): the example acknowledges it without applying it twice.
    const admin = new HookledgerClient({ baseUrl: server.url, token: await tokenFor(db.prisma, "admin") });
    await admin.request("POST", `/deliveries/${d.id}/resend`, { body: { reason: "district asked for it again" } });
    await waitFor(async () => out.includes(`duplicate ${d.delivery_key} (evt_verify_1)`), 10_000, "the duplicate line");

    // The same bytes under another secret: refused with 400.
    const forged = await fetch(`http://127.0.0.1:${port}/hooks`, {
      method: "POST",
      headers: {
        "webhook-id": "forged_1",
        "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
        "webhook-signature": "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
      },
      body: JSON.stringify({ id: "evt_forged", type: "assignment.graded", data: {} }),
    });
    expect(forged.status).toBe(400);
    await waitFor(async () => out.includes("rejected forged_1"), 5_000, "the rejected line");
    expect(out).not.toContain("evt_forged");
  });
});

// An endpoint that echoes its request rarely echoes it byte for byte: a
// gateway's redirect URL-encodes the API key into its Location, a debugging
// receiver answers with the request as JSON (quotes and backslashes escaped),
// or base64s it into a header. Every one of those forms of every credential
// must be masked before the answer is stored, for worker attempts and for
// test sends (whose answer support reads), and none may reach the database.
import { randomBytes } from "node:crypto";
import type http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { attemptsOf, deliveryOf, seedEvents, startReceiver, waitFor, worker, type Receiver } from "../helpers/worker-helpers";
import { dumpDatabase } from "../helpers/endpoint-auth-helpers";
import { MASK } from "../../lib/subscriptions/endpoint-auth";
import * as subs from "../../app/api/v1/subscriptions/route";
import * as testRoute from "../../app/api/v1/subscriptions/[id]/test/route";
import type { DeliveryWorker } from "../../worker/worker";

// Characters each encoding changes: / + = & % space, a quote and a backslash (JSON), é (Latin-1, two bytes in UTF-8).
const KEY = `k3y/${randomBytes(9).toString("hex")}+=&"\\%é ok`;
const TOKEN = `t0k/${randomBytes(9).toString("hex")}+Zz==`;
const AUTH = `Bearer ${TOKEN}`;
const USER = `district-${randomBytes(4).toString("hex")}`;
const PASSWORD = `pw/${randomBytes(9).toString("hex")}+`;
const BASIC = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString("base64")}`;

const b64 = (s: string) => Buffer.from(s).toString("base64");
const b64url = (s: string) => Buffer.from(s).toString("base64url");
/** Percent-encoding of every byte but letters and digits, with lower-case hex (as some clients write it). */
const lowerPct = (s: string) =>
  [...Buffer.from(s)].map((b) => (/[A-Za-z0-9]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, "0")}`)).join("");
/** How application/x-www-form-urlencoded writes it (spaces as +). */
const form = (s: string) => new URLSearchParams({ v: s }).toString().slice(2);

/** The part of base64(prefix + s) that depends on s alone, for each of the three alignments. */
function b64Fragments(s: string): string[] {
  const out: string[] = [];
  for (const k of [0, 1, 2]) {
    const enc = Buffer.concat([Buffer.alloc(k, 0x41), Buffer.from(s)]).toString("base64");
    out.push(enc.slice(Math.ceil((8 * k) / 6), Math.floor((8 * (k + Buffer.byteLength(s))) / 6)));
  }
  return out;
}

/** Every form of a credential that must not be stored. */
function forms(s: string): string[] {
  return [
    s,
    encodeURIComponent(s),
    encodeURI(s),
    lowerPct(s),
    form(s),
    encodeURIComponent(encodeURIComponent(s)),
    JSON.stringify(s).slice(1, -1),
    b64(s),
    b64url(s),
    ...b64Fragments(s),
    ...b64Fragments(s).map(encodeURIComponent),
    // base64 of an answer that held the JSON-escaped value (a request dumped as JSON, then encoded).
    ...b64Fragments(JSON.stringify(s).slice(1, -1)),
  ];
}
const SECRETS = [KEY, TOKEN, AUTH, BASIC, `${USER}:${PASSWORD}`, PASSWORD];

/** An answer that echoes every credential of the request in every form, as a careless gateway might. */
function echo(req: http.IncomingMessage, res: http.ServerResponse) {
  const key = String(req.headers["x-api-key"]);
  const auth = String(req.headers.authorization);
  const basic = String(req.headers["x-basic"]);
  const userPass = Buffer.from(basic.slice("Basic ".length), "base64").toString();
  const location =
    `https://sso.district.example/login?k=${encodeURIComponent(key)}&kl=${lowerPct(key)}&kf=${form(key)}&kk=${encodeURIComponent(encodeURIComponent(key))}` +
    `&a=${encodeURIComponent(auth)}&ab=${b64url(`ctx:${auth}`)}&kb=${encodeURIComponent(b64(`{"key":${JSON.stringify(key)}}`))}&u=${encodeURIComponent(userPass)}`;
  res.writeHead(302, {
    location,
    "x-echo-b64": b64(`x-api-key: ${key}; authorization: ${auth}`),
    "x-echo-b64url": b64url(`${key}`),
    "x-echo-url": encodeURIComponent(`${key}|${auth}`),
  });
  res.end(
    JSON.stringify({ headers: req.headers, again: { key, auth, userPass } }) +
      `\nbase64: ${b64(JSON.stringify(req.headers))}\nbase64 alone: ${b64(key)} ${b64(auth)} ${b64(userPass)}\nencoded: ${encodeURIComponent(key)} ${lowerPct(auth)}`,
  );
}

let db: TestDb;
let manager: string;
let receiver: Receiver;
let w: DeliveryWorker | undefined;

beforeAll(async () => {
  process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS = "1";
  db = await createTestDatabase();
  manager = await tokenFor(db.prisma, "manager");
  await db.prisma.tenant.create({ data: { id: "lincoln", name: "Lincoln USD" } });
  receiver = await startReceiver(echo);
  const r = await call(subs.POST, {
    token: manager,
    body: {
      id: "sub_echo",
      name: "Echoing gateway",
      url: receiver.url,
      eventTypes: ["assignment.graded"],
      tenant: "lincoln",
      retryPolicy: { ladderSeconds: [3600] },
      headers: { Authorization: AUTH, "X-Api-Key": KEY, "X-Basic": BASIC },
    },
  });
  expect(r.status, r.text).toBe(201);
});

afterAll(async () => {
  await w?.stop();
  await receiver?.close();
  await db?.close();
});

function expectNoForm(text: string, where: string) {
  for (const s of SECRETS) for (const f of forms(s)) expect(text.includes(f), `${where} holds ${JSON.stringify(f)} (a form of ${JSON.stringify(s)})`).toBe(false);
}

describe("encoded forms of the endpoint's credentials are masked before an answer is stored", () => {
  it("the receiver really sent every form (the test checks what it means to)", async () => {
    const res = await fetch(receiver.url, { method: "POST", headers: { authorization: AUTH, "x-api-key": KEY.replace("é", "e"), "x-basic": BASIC }, redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toContain(encodeURIComponent(KEY.replace("é", "e")));
    expect(await res.text()).toContain(JSON.stringify(KEY.replace("é", "e")).slice(1, -1));
  });

  it("test send: the answer and the test_sends row hold none of them, and say where they were", async () => {
    const r = await call(testRoute.POST, { token: manager, params: { id: "sub_echo" }, body: {} });
    expect(r.status, r.text).toBe(200);
    expect(r.json.status).toBe(302);
    expect(r.json.error).toMatch(/^Redirect to https:\/\/sso\.district\.example\/login\?k=••••&kl=••••&kf=••••&kk=••••&a=••••&/);
    expect(r.json.body).toContain(MASK);
    expect(r.json.headers["x-echo-b64url"]).toBe(MASK);
    expectNoForm(r.text, "the test send's answer");
    const { rows } = await db.pool.query(`SELECT error_message, response_headers::text AS headers, response_excerpt FROM test_sends WHERE subscription_id = 'sub_echo'`);
    expect(rows).toHaveLength(1);
    expectNoForm(JSON.stringify(rows[0]), "test_sends");
  });

  it("worker attempt: the attempt's error, headers and excerpt hold none of them, nor does anything else in the database", async () => {
    w = worker(db.url);
    await seedEvents(db.pool, "evt_echo_", 1, ["sub_echo"], "lincoln");
    const d = await waitFor(async () => {
      const x = await deliveryOf(db.pool, "sub_echo", "evt_echo_1");
      return x && x.attempt_count > 0 ? x : null;
    });
    const [attempt] = await attemptsOf(db.pool, d.id);
    expect(attempt.status_code).toBe(302);
    expect(attempt.error_message).toMatch(/^Redirect to https:\/\/sso\.district\.example\/login\?k=••••&kl=••••&kf=••••&kk=••••&a=••••&/);
    expect(attempt.response_excerpt).toContain(MASK);
    expectNoForm(JSON.stringify(attempt), "the attempt");
    expectNoForm(await dumpDatabase(db.pool), "the database");
  });
});

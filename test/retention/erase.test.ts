// Erasure on request, end to end on a real Postgres with the real worker and
// real receivers: events published through lib/events, delivered, retried,
// dead-lettered (with receivers that echo the payload into their answers, its
// headers and a redirect's Location) and held pending; then erased through
// the API and the CLI. Afterwards a lookup finds nothing, a data-only dump of
// the whole database holds neither the student id nor the payloads'
// distinctive text, nothing of it is sent again, redrive, resend and
// republish are refused, and the receipt and audit row hold the key and the
// counts but no value. Bad input and dry runs change nothing.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli-run";
import { createTestDatabase, tableCounts, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { FAST, createSub, startReceiver, waitFor, type Receiver } from "../helpers/worker-helpers";
import { runWorker } from "../../worker/main";
import { publishEventStandalone } from "../../lib/events/publish";
import { findLookupResults } from "../../lib/dashboard/lookup";
import { getDeliveryDetail } from "../../lib/dashboard/delivery";
import * as erasures from "../../app/api/v1/erasures/route";
import * as events from "../../app/api/v1/events/route";
import * as batch from "../../app/api/v1/events/batch/route";
import * as redriveOne from "../../app/api/v1/deliveries/[id]/redrive/route";
import * as resend from "../../app/api/v1/deliveries/[id]/resend/route";
import * as testSend from "../../app/api/v1/subscriptions/[id]/test/route";
import { ZCreateErasure } from "../../lib/erasure/erasure-input";
import { parseSubjectFlag } from "../../cli/erase";

const exec = promisify(execFile);

let db: TestDb;
let admin: string;
let engineer: string;
let producer: string;
let receiver: Receiver;
let worker: { stop: () => Promise<unknown> };
/** Held requests on /hold: answered when the test says so. */
const held: { release: (status: number) => void; body: string }[] = [];

// Distinctive text in the erased payloads: the dump must hold none of it afterwards.
const MARK_881 = "ZEBRAQUILL";
const MARK_882 = "OTTERLAMP";

beforeAll(async () => {
  db = await createTestDatabase();
  admin = await tokenFor(db.prisma, "admin");
  engineer = await tokenFor(db.prisma, "engineer");
  producer = await tokenFor(db.prisma, "producer");
  receiver = await startReceiver((req, res, r) => {
    const body = r.body.toString("utf8");
    const echo = body.slice(0, 300);
    if (req.url === "/ok") return void ((res.statusCode = 204), res.end());
    if (req.url === "/echo422") return void ((res.statusCode = 422), res.end(`rejected: ${echo}`));
    if (req.url === "/echo500") {
      res.statusCode = 500;
      res.setHeader("x-echo", echo.replace(/[^\x20-\x7e]/g, "?"));
      return void res.end(`failed on ${echo}`);
    }
    if (req.url === "/redirect") {
      res.statusCode = 302;
      res.setHeader("location", `https://elsewhere.example.test/in?body=${encodeURIComponent(echo)}`);
      return void res.end();
    }
    if (req.url === "/hold")
      return new Promise<void>((resolve) =>
        held.push({
          body,
          release: (status) => {
            res.statusCode = status;
            res.end(`failed on ${echo}`);
            resolve();
          },
        }),
      );
    res.statusCode = 404;
    res.end();
  });
  const slow = { ladderSeconds: [3600] };
  const subs: [string, string | null, string, Record<string, unknown>?, string?, string[]?][] = [
    ["sub_lin_ok", "lincoln", "/ok"],
    ["sub_lin_dead", "lincoln", "/echo422"],
    ["sub_lin_redirect", "lincoln", "/redirect"],
    ["sub_lin_retry", "lincoln", "/echo500", slow],
    ["sub_lin_paused", "lincoln", "/ok", {}, "paused"],
    ["sub_west_ok", "westfield", "/ok"],
    ["sub_west_redirect", "westfield", "/redirect"],
    ["sub_ops", null, "/echo500", slow, "active", ["hookledger.delivery.dead_lettered"]],
    ["sub_hold", "lincoln", "/hold", slow, "active", ["assignment.submitted"]],
  ];
  for (const [id, tenant, path, retryPolicy, state, eventTypes] of subs) {
    await createSub(db.pool, { id, url: receiver.url.replace("/hooks", path), retryPolicy, state, eventTypes });
    await db.pool.query("UPDATE subscriptions SET tenant = $2 WHERE id = $1", [id, tenant]);
  }
  const graded = (id: string, tenant: string, studentId: string, mark: string, n: number) =>
    publishEventStandalone(db.prisma, {
      id,
      type: "assignment.graded",
      subject: { tenant, studentId, assignmentId: `asg_${n}` },
      data: { studentId, grade: "B+", comment: `${mark} remark ${n}`, score: 87 },
    });
  for (let i = 1; i <= 3; i++) await graded(`evt_la${i}`, "lincoln", "stu_881", MARK_881, i);
  for (let i = 1; i <= 2; i++) await graded(`evt_wa${i}`, "westfield", "stu_881", MARK_881, 10 + i);
  for (let i = 1; i <= 2; i++) await graded(`evt_lb${i}`, "lincoln", "stu_882", MARK_882, 20 + i);
  await graded("evt_wc1", "westfield", "stu_883", MARK_882, 31);

  // An operator's test sends of two of the events' stored bytes: the answers (echoing them) are kept in test_sends.
  process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS = "1";
  for (const [sub, eventId] of [
    ["sub_lin_dead", "evt_la2"],
    ["sub_west_redirect", "evt_wa1"],
    ["sub_lin_dead", "evt_lb2"],
  ]) {
    const r = await call(testSend.POST, { token: admin, params: { id: sub }, body: { eventId } });
    expect(r.status, r.text).toBeLessThan(300);
  }

  const ac = new AbortController();
  const done = runWorker({ databaseUrl: db.url, ...FAST, signal: ac.signal });
  worker = { stop: async () => (ac.abort(), done) };
  // Settled: every delivery of an active subscription is delivered, dead-lettered or scheduled, each dead letter has its
  // operational event, and those events' deliveries to sub_ops have failed once (the echo is stored).
  await waitFor(
    async () => {
      const { rows } = await db.pool.query(
        `SELECT (SELECT count(*) FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id
                  WHERE s.state = 'active' AND d.state NOT IN ('delivered', 'dead_letter', 'scheduled'))::int AS busy,
                (SELECT count(*) FROM deliveries WHERE state = 'dead_letter')::int AS dead,
                (SELECT count(*) FROM events WHERE type = 'hookledger.delivery.dead_lettered')::int AS ops,
                (SELECT count(*) FROM deliveries WHERE subscription_id = 'sub_ops' AND state = 'scheduled')::int AS ops_failed`,
      );
      const r = rows[0];
      return r.busy === 0 && r.dead === 13 && r.ops === 13 && r.ops_failed === 13 ? r : null;
    },
    30_000,
    "the seeded ledger to settle",
  );
}, 60_000);

afterAll(async () => {
  for (const h of held.splice(0)) h.release(500);
  await worker?.stop();
  await receiver?.close();
  await db?.close();
});

/**
 * Every row of every table in the database as text. `pg_dump --data-only` when
 * the one on PATH can read this server; Debian's pg_dump is older than the
 * embedded PostgreSQL and refuses it, so otherwise the same content the same
 * way pg_dump takes it: COPY of every table of every non-system schema.
 */
async function dumpData(): Promise<{ text: string; via: string }> {
  try {
    const r = await exec("pg_dump", ["--data-only", "--no-owner", db.url], { maxBuffer: 256 * 1024 * 1024 });
    return { text: r.stdout, via: "pg_dump" };
  } catch (err) {
    if (!/version mismatch|ENOENT|not found/i.test(String((err as Error).message))) throw err;
  }
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    const { rows: tables } = await c.query<{ t: string }>(
      `SELECT format('%I.%I', schemaname, tablename) AS t FROM pg_tables
        WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`,
    );
    let text = "";
    for (const { t } of tables) {
      // COPY's text format writes bytea as \x hex; pg_dump does the same. Decode hex so a value inside the payload bytes is found too.
      const { rows } = await c.query(`SELECT t::text AS line FROM ${t} t`);
      text += `-- ${t}\n${rows.map((r) => r.line.replace(/\\{1,2}x([0-9a-f]+)/g, (_: string, h: string) => Buffer.from(h, "hex").toString("utf8"))).join("\n")}\n`;
    }
    return { text, via: `SELECT of ${tables.length} tables` };
  } finally {
    await c.end();
  }
}

/**
 * Tables a running worker and the API write whatever anyone erases: the heartbeat, a token's last use, the DLQ sampler's
 * series. "Changes nothing" compares every other table, row for row.
 */
const VOLATILE = ["worker_heartbeats", "api_tokens", "dlq_samples", "dlq_sample_groups", "sign_in_attempts"];
async function digest(): Promise<Record<string, string>> {
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    const { rows: tables } = await c.query<{ t: string }>("SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1");
    const out: Record<string, string> = {};
    for (const { t } of tables) {
      if (VOLATILE.includes(t)) continue;
      const { rows } = await c.query(`SELECT t::text AS line FROM "${t}" t ORDER BY 1`);
      out[t] = createHash("sha256")
        .update(rows.map((r) => r.line).join("\n"))
        .digest("hex");
    }
    return out;
  } finally {
    await c.end();
  }
}
const erase = (body: unknown, token = admin) => call(erasures.POST, { token, body });
const stateOf = async (eventIds: string[]) =>
  (
    await db.pool.query<{ state: string; resolution: string | null; n: number }>(
      "SELECT state, resolution, count(*)::int AS n FROM deliveries WHERE event_id = ANY($1) GROUP BY 1, 2 ORDER BY 1, 2",
      [eventIds],
    )
  ).rows;
const LINCOLN_881 = ["evt_la1", "evt_la2", "evt_la3"];
const WESTFIELD_881 = ["evt_wa1", "evt_wa2"];

const cli = (...args: string[]) => runCli(args, { DATABASE_URL: db.url });

describe("erasure: input", () => {
  it("the schema and the CLI's --subject parser", () => {
    expect(parseSubjectFlag("studentId=stu_881")).toEqual({ studentId: "stu_881" });
    expect(parseSubjectFlag("studentId")).toBeNull();
    expect(ZCreateErasure.safeParse({ subject: { studentId: "stu_881" }, reason: "records request 2291" }).success).toBe(true);
    expect(ZCreateErasure.safeParse({ subject: { studentId: 881 }, reason: "records request 2291" }).success).toBe(true);
  });

  it("the dump helper sees the values before the erasure (so its later silence means something)", async () => {
    const { text } = await dumpData();
    expect(text).toContain("stu_881");
    expect(text).toContain(MARK_881);
    // The echoes were stored where the erasure must reach: attempts (excerpt, headers), a redirect's message, the ops events and their attempts.
    const { rows } = await db.pool.query(
      `SELECT (SELECT count(*) FROM attempts WHERE response_excerpt LIKE '%stu_881%')::int AS excerpts,
              (SELECT count(*) FROM attempts WHERE response_headers::text LIKE '%stu_881%')::int AS headers,
              (SELECT count(*) FROM deliveries WHERE last_error_message LIKE '%stu_881%')::int AS messages,
              (SELECT count(*) FROM events WHERE type LIKE 'hookledger.%' AND convert_from(payload, 'UTF8') LIKE '%stu_881%')::int AS ops,
              (SELECT count(*) FROM test_sends WHERE response_excerpt LIKE '%stu_881%' OR error_message LIKE '%stu_881%')::int AS tests`,
    );
    expect(rows[0].excerpts).toBeGreaterThan(0);
    expect(rows[0].headers).toBeGreaterThan(0);
    expect(rows[0].messages).toBeGreaterThan(0);
    expect(rows[0].ops).toBeGreaterThan(0);
    expect(rows[0].tests).toBe(2);
  });

  it("bad input is a 400 (CLI: exit 2 with the message) and changes nothing; only admins may erase", async () => {
    const before = await tableCounts(db.pool);
    const dump = await digest();
    const cases: [unknown, RegExp][] = [
      [{ reason: "records request 2291" }, /subject/],
      [{ subject: {}, reason: "records request 2291" }, /exactly one/],
      [{ subject: { studentId: "stu_881", assignmentId: "asg_1" }, reason: "records request 2291" }, /exactly one/],
      [{ subject: { studentId: "stu_881" } }, /reason/],
      [{ subject: { studentId: "stu_881" }, reason: "  " }, /reason/],
      [{ subject: { "student-id": "stu_881" }, reason: "records request 2291" }, /not searchable/],
      [{ subject: { tenant: "lincoln" }, reason: "records request 2291" }, /tenant is not a subject/],
      [{ subject: { studentId: "" }, reason: "records request 2291" }, /empty/],
      [{ subject: { studentId: "   " }, reason: "records request 2291" }, /empty/],
      [{ subject: { studentId: "stu_881" }, tenant: "springfield", reason: "records request 2291" }, /tenant "springfield" is unknown/],
      [{ subject: { studentId: "stu_881" }, reason: "erase stu_881 please" }, /repeats the value/],
    ];
    for (const [body, msg] of cases) {
      const r = await erase(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.error.message, JSON.stringify(body)).toMatch(msg);
    }
    expect((await erase({ subject: { studentId: "stu_881" }, reason: "records request 2291" }, engineer)).status).toBe(403);
    expect((await erase({ subject: { studentId: "stu_881" }, reason: "records request 2291" }, producer)).status).toBe(403);

    const cliCases: [string[], RegExp][] = [
      [["--reason", "records request 2291"], /--subject is required/],
      [["--subject", "stu_881", "--reason", "records request 2291"], /key=value/],
      [["--subject", "studentId=stu_881"], /--reason: reason is required/],
      [["--subject", "student-id=stu_881", "--reason", "records request 2291"], /--subject: .*not searchable/],
      [["--subject", "studentId=", "--reason", "records request 2291"], /empty/],
      [["--subject", "studentId=stu_881", "--tenant", "springfield", "--reason", "records request 2291"], /tenant "springfield" is unknown/],
    ];
    for (const [args, msg] of cliCases) {
      const r = await cli("erase", ...args);
      expect(r.code, `${args.join(" ")}: ${r.stdout}${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(msg);
    }
    expect(await tableCounts(db.pool)).toEqual(before);
    expect(await db.pool.query("SELECT count(*)::int AS n FROM erasures").then((r) => r.rows[0].n)).toBe(0);
    expect(await digest()).toEqual(dump);
  }, 120_000);

  it("a dry run (API and CLI) prints the counts and changes nothing", async () => {
    const dump = await digest();
    const r = await erase({ subject: { studentId: "stu_881" }, tenant: "lincoln", reason: "records request 2291", dryRun: true });
    expect(r.status, r.text).toBe(200);
    // 3 events x 5 lincoln subscriptions; unfinished: dead (2 subs) + retry + paused = 4 per event; 3 ops events per dead-lettering sub.
    expect(r.json).toMatchObject({
      id: null,
      dryRun: true,
      status: "preview",
      subjectKey: "studentId",
      tenant: "lincoln",
      events: 3,
      opsEvents: 6,
      deliveries: 21,
      resolved: 18,
    });
    expect(r.text).not.toContain("stu_881");
    const c = await cli("erase", "--subject", "studentId=stu_881", "--reason", "records request 2291", "--dry-run");
    expect(c.code, c.stderr).toBe(0);
    expect(c.stdout).toMatch(/would erase 5 events \(and 8 operational events about them\)/);
    expect(c.stdout).toMatch(/Dry run: nothing changed/);
    expect(c.stdout).not.toContain("stu_881");
    expect(await digest()).toEqual(dump);
  }, 60_000);
});

describe("erasure", () => {
  let tenantReceipt: string;
  let receipt: any;

  it("--tenant limits it: the CLI erases stu_881 in lincoln, prints the receipt, and westfield's stu_881 is untouched", async () => {
    const r = await cli("erase", "--subject", "studentId=stu_881", "--tenant", "lincoln", "--reason", "records request 2291");
    expect(r.code, r.stderr).toBe(0);
    tenantReceipt = r.stdout;
    expect(r.stdout).toMatch(/Erasure er_[0-9a-f]{16} finished/);
    expect(r.stdout).toMatch(/subject key +studentId/);
    expect(r.stdout).toMatch(/tenant +lincoln/);
    expect(r.stdout).toMatch(/events +3 erased, and 6 operational events/);
    expect(r.stdout).toMatch(/deliveries +21 scrubbed, 18 unfinished resolved as erased/);
    expect(r.stdout).toMatch(/by +cli:/);
    expect(r.stdout).toMatch(/why +records request 2291/);
    expect(r.stdout).not.toContain("stu_881");
    const ev = await db.pool.query(
      "SELECT id, tombstone, erasure_id, subject, subject_values, convert_from(payload, 'UTF8') AS payload FROM events WHERE id = ANY($1) ORDER BY id",
      [[...LINCOLN_881, ...WESTFIELD_881]],
    );
    for (const e of ev.rows.filter((x) => x.id.startsWith("evt_la")))
      expect(e).toMatchObject({ tombstone: "erased", subject: { erased: true }, subject_values: [], payload: '{"erased":true}' });
    for (const e of ev.rows.filter((x) => x.id.startsWith("evt_wa"))) {
      expect(e.tombstone).toBeNull();
      expect(e.subject_values).toContain("stu_881");
    }
    expect(await stateOf(LINCOLN_881)).toEqual([
      { state: "delivered", resolution: null, n: 3 },
      { state: "resolved", resolution: "erased", n: 12 },
    ]);
    expect((await findLookupResults({ q: "stu_881" }, db.pool)).deliveries.every((d) => d.eventId.startsWith("evt_wa"))).toBe(true);
  }, 60_000);

  it("the API erases the rest and answers the receipt: key, tenant, counts, when, by whom, why, and no value", async () => {
    const r = await erase({ subject: { studentId: "stu_881" }, reason: "records request 2291" });
    expect(r.status, r.text).toBe(200);
    receipt = r.json;
    expect(receipt).toMatchObject({
      dryRun: false,
      status: "finished",
      subjectKey: "studentId",
      tenant: null,
      reason: "records request 2291",
      by: "token:test-admin",
      events: 2,
      opsEvents: 2,
      deliveries: 6,
      resolved: 4,
    });
    expect(receipt.id).toMatch(/^er_[0-9a-f]{16}$/);
    expect(receipt.attempts).toBeGreaterThan(0);
    expect(Date.parse(receipt.finishedAt)).toBeGreaterThanOrEqual(Date.parse(receipt.startedAt));
    expect(r.text).not.toContain("stu_881");
    expect(await stateOf(WESTFIELD_881)).toEqual([
      { state: "delivered", resolution: null, n: 2 },
      { state: "resolved", resolution: "erased", n: 2 },
    ]);
  });

  it("a lookup by the student id finds nothing; the other students are untouched", async () => {
    for (const q of ["stu_881", "studentId:stu_881"]) expect((await findLookupResults({ q }, db.pool)).deliveries).toEqual([]);
    const other = await findLookupResults({ q: "stu_882" }, db.pool);
    expect(new Set(other.deliveries.map((d) => d.eventId))).toEqual(new Set(["evt_lb1", "evt_lb2"]));
    const ev = await db.pool.query("SELECT tombstone, convert_from(payload, 'UTF8') AS payload FROM events WHERE id IN ('evt_lb1', 'evt_lb2', 'evt_wc1')");
    for (const e of ev.rows) {
      expect(e.tombstone).toBeNull();
      expect(e.payload).toContain(MARK_882);
    }
    expect(await stateOf(["evt_lb1", "evt_lb2"])).not.toContainEqual(expect.objectContaining({ resolution: "erased" }));
  });

  it("no table holds the student id or the erased payloads' text (a data-only dump of the whole database)", async () => {
    const { text, via } = await dumpData();
    expect(via).toBeTruthy();
    expect(text).not.toContain("stu_881");
    expect(text).not.toContain(MARK_881);
    // The dump is real: the other students' values are still in it.
    expect(text).toContain("stu_882");
    expect(text).toContain(MARK_882);
  });

  it("the audit row and the erasures table hold the key and the counts, never the value", async () => {
    const audit = await db.prisma.auditEntry.findMany({ where: { action: "erasure.run" }, orderBy: { id: "asc" } });
    expect(audit).toHaveLength(2);
    expect(audit[1]).toMatchObject({
      actor: "token:test-admin",
      targetType: "erasure",
      targetId: receipt.id,
      reason: "records request 2291",
      details: { subjectKey: "studentId", tenant: null, events: 2, opsEvents: 2, deliveries: 6, resolved: 4, attempts: receipt.attempts },
    });
    expect(audit[1].tenantId).toBeNull();
    expect(audit[0].actor).toMatch(/^cli:/);
    expect(audit[0].tenantId).toBe("lincoln");
    expect(audit[0].details).toMatchObject({ subjectKey: "studentId", tenant: "lincoln", events: 3, opsEvents: 6, deliveries: 21, resolved: 18 });
    expect(tenantReceipt).toContain(audit[0].targetId);
    const rows = (await db.pool.query("SELECT * FROM erasures ORDER BY started_at")).rows;
    expect(rows.map((e) => [e.subject_key, e.tenant, e.status, e.events_erased, e.deliveries_resolved])).toEqual([
      ["studentId", "lincoln", "finished", 3, 18],
      ["studentId", null, "finished", 2, 4],
    ]);
    expect(JSON.stringify([audit, rows], (_k, v) => (typeof v === "bigint" ? String(v) : v))).not.toContain("stu_881");
  });

  it("the delivery's timeline says when its payload was erased, by which erasure, who and why; a live delivery's does not", async () => {
    const id = (await db.pool.query("SELECT id FROM deliveries WHERE event_id = 'evt_wa1' AND subscription_id = 'sub_west_ok'")).rows[0].id;
    const d = await getDeliveryDetail({ id }, db.pool);
    const item = d.history.find((h) => h.action === "erasure.run");
    expect(item).toMatchObject({ actor: "token:test-admin", details: { erasureId: receipt.id, subjectKey: "studentId" } });
    expect(item!.reason).toMatch(new RegExp(`^Payload was erased by erasure ${receipt.id} on \\d{4}-.*: records request 2291$`));
    expect(d.state).toBe("delivered");
    expect(JSON.parse(d.payload.pretty!)).toEqual({ erased: true });
    const live = (await db.pool.query("SELECT id FROM deliveries WHERE event_id = 'evt_lb1' AND subscription_id = 'sub_lin_ok'")).rows[0].id;
    expect((await getDeliveryDetail({ id: live }, db.pool)).history.some((h) => h.action === "erasure.run")).toBe(false);
  });

  it("redrive and resend of an erased delivery are refused with a 409 naming the erasure; nothing changes", async () => {
    const dead = (await db.pool.query("SELECT id FROM deliveries WHERE event_id = 'evt_wa1' AND subscription_id = 'sub_west_redirect'")).rows[0].id;
    const delivered = (await db.pool.query("SELECT id FROM deliveries WHERE event_id = 'evt_wa1' AND subscription_id = 'sub_west_ok'")).rows[0].id;
    const before = await tableCounts(db.pool);
    const rows = async () => (await db.pool.query("SELECT * FROM deliveries WHERE id = ANY($1) ORDER BY id", [[dead, delivered]])).rows;
    const was = await rows();
    const cases = [
      await call(redriveOne.POST, { token: engineer, params: { id: dead }, body: { reason: "INC-9 try again" } }),
      await call(resend.POST, { token: engineer, params: { id: dead }, body: { reason: "INC-9 try again" } }),
      await call(resend.POST, { token: engineer, params: { id: delivered }, body: { reason: "INC-9 try again" } }),
    ];
    for (const r of cases) {
      expect(r.status, r.text).toBe(409);
      expect(r.json.error.message).toMatch(new RegExp(`its payload was erased by erasure ${receipt.id} on \\d{4}-`));
      expect(r.json.error.details).toMatchObject({ erasureId: receipt.id });
    }
    expect(await tableCounts(db.pool)).toEqual(before);
    expect(await rows()).toEqual(was);
  });

  it("no other statement makes an erased event's delivery due again (a recover's resend, any later path): the row is skipped, a live one moves", async () => {
    // In a transaction rolled back at the end, so the live row moved for comparison is not sent meanwhile.
    const c = await db.pool.connect();
    try {
      await c.query("BEGIN");
      const reopen = (ids: string[]) =>
        c.query(
          `UPDATE deliveries SET state = 'pending', next_attempt_at = now(), delivered_at = NULL, dead_letter_reason = NULL, dead_lettered_at = NULL,
                  resolution = NULL, resolved_at = NULL, resolved_by = NULL, resolution_reason = NULL
            WHERE event_id = ANY($1) AND state IN ('delivered', 'resolved')`,
          [ids],
        );
      expect((await reopen([...LINCOLN_881, ...WESTFIELD_881])).rowCount).toBe(0);
      expect(
        (await c.query("SELECT count(*)::int AS n FROM deliveries WHERE event_id = ANY($1) AND state = 'pending'", [[...LINCOLN_881, ...WESTFIELD_881]])).rows[0].n,
      ).toBe(0);
      expect((await reopen(["evt_wc1"])).rowCount).toBeGreaterThan(0);
    } finally {
      await c.query("ROLLBACK");
      c.release();
    }
  });

  it("a republish of an erased event id is a 409 event_erased and writes nothing (single, batch, and publishEvent)", async () => {
    const before = await tableCounts(db.pool);
    const ev = {
      id: "evt_la1",
      type: "assignment.graded",
      subject: { tenant: "lincoln", studentId: "stu_881", assignmentId: "asg_1" },
      data: { studentId: "stu_881", grade: "B+" },
    };
    const one = await call(events.POST, { token: producer, body: ev });
    expect(one.status, one.text).toBe(409);
    expect(one.json.error).toMatchObject({ code: "event_erased", details: { eventId: "evt_la1" } });
    expect(one.json.error.message).toMatch(/erased by erasure er_/);
    const many = await call(batch.POST, { token: producer, body: { events: [ev, { ...ev, id: "evt_wa2" }] } });
    expect(many.status, many.text).toBe(200);
    expect(many.json.results.map((x: any) => x.error?.code)).toEqual(["event_erased", "event_erased"]);
    await expect(publishEventStandalone(db.prisma, ev)).rejects.toMatchObject({ code: "event_erased" });
    expect(await tableCounts(db.pool)).toEqual(before);
    expect((await dumpData()).text).not.toContain("stu_881");
  });

  it("resolved deliveries are never sent afterwards, with the worker running and their subscriptions active", async () => {
    const since = Date.now();
    const keys = (await db.pool.query("SELECT delivery_key FROM deliveries WHERE resolution = 'erased'")).rows.map((r) => r.delivery_key);
    expect(keys.length).toBe(18 + 4);
    // Wake everything: the paused subscription resumed, every row due now.
    await db.pool.query("UPDATE subscriptions SET state = 'active' WHERE id = 'sub_lin_paused'");
    await db.pool.query("UPDATE deliveries SET next_attempt_at = now()");
    await db.pool.query("NOTIFY hookledger_deliveries");
    // The worker is alive: a fresh event for another student reaches the resumed subscription.
    await publishEventStandalone(db.prisma, { id: "evt_lb9", type: "assignment.graded", subject: { tenant: "lincoln", studentId: "stu_882" }, data: { grade: "A" } });
    await waitFor(
      async () => (await db.pool.query("SELECT 1 FROM deliveries WHERE event_id = 'evt_lb9' AND subscription_id = 'sub_lin_paused' AND state = 'delivered'")).rowCount,
      20_000,
      "a fresh delivery on the resumed subscription",
    );
    await new Promise((r) => setTimeout(r, 1_000));
    const late = receiver.received.filter((x) => x.at >= since && keys.includes(x.id));
    expect(late).toEqual([]);
    expect(receiver.received.filter((x) => x.at >= since).some((x) => x.body.toString().includes('"erased"'))).toBe(false);
    expect(await stateOf(LINCOLN_881)).toEqual([
      { state: "delivered", resolution: null, n: 3 },
      { state: "resolved", resolution: "erased", n: 12 },
    ]);
  }, 40_000);

  it("an attempt in flight during the erasure: its answer (echoing the payload) is not stored and does not revive the delivery", async () => {
    await publishEventStandalone(db.prisma, {
      id: "evt_held1",
      type: "assignment.submitted",
      subject: { tenant: "lincoln", studentId: "stu_991" },
      data: { studentId: "stu_991", note: "PELICANFROST" },
    });
    await waitFor(async () => held.length > 0, 20_000, "the held request");
    const d = (await db.pool.query("SELECT id, state, delivery_key FROM deliveries WHERE event_id = 'evt_held1'")).rows[0];
    expect(d.state).toBe("in_flight");
    const r = await erase({ subject: { studentId: "stu_991" }, tenant: "lincoln", reason: "records request 2300" });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ events: 1, deliveries: 1, resolved: 1 });
    const count = receiver.count(d.delivery_key);
    held.shift()!.release(500); // the receiver answers with the payload in its body
    await new Promise((res) => setTimeout(res, 1_500));
    const after = (await db.pool.query("SELECT state, resolution, total_attempts, last_error_message FROM deliveries WHERE id = $1", [d.id])).rows[0];
    expect(after).toMatchObject({ state: "resolved", resolution: "erased", total_attempts: 0, last_error_message: null });
    expect((await db.pool.query("SELECT count(*)::int AS n FROM attempts WHERE delivery_id = $1", [d.id])).rows[0].n).toBe(0);
    expect(receiver.count(d.delivery_key)).toBe(count);
    const { text } = await dumpData();
    expect(text).not.toContain("stu_991");
    expect(text).not.toContain("PELICANFROST");
  }, 40_000);
});

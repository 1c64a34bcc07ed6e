// Notifications to a district: its contacts set through the API (validated,
// scoped, audited), and the notices the worker makes when its endpoint fails,
// is disabled or recovers, or a signing secret's overlap is ending, received
// by a real local SMTP server (smtp-server) and a real local webhook receiver.
// The subscription is paused, disabled and resumed by a real in-process worker
// against a real receiver; the notifier is ticked by hand.
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "../helpers/db";
import { call, tokenFor } from "../helpers/api";
import { createSub, seedEvents, startReceiver, waitFor, worker, type Receiver } from "../helpers/worker-helpers";
import { createApiToken } from "../../lib/auth/tokens";
import { startNotifier, type Notifier } from "../../worker/notifier";
import { listNotifications } from "../../lib/ledger/sql/notifications";
import type { DeliveryWorker } from "../../worker/worker";
import * as contactsRoute from "../../app/api/v1/tenants/[id]/contacts/route";
import * as notificationsRoute from "../../app/api/v1/notifications/route";
import * as settingsRoute from "../../app/api/v1/notifications/settings/route";

type Mail = { to: string[]; subject: string; text: string };

const GONE_CODE = "fnkey_0f9c2d7e5b1a4c3d";

let db: TestDb;
let smtp: SMTPServer;
let smtpPort: number;
const mails: Mail[] = [];
let hook: Receiver;
let endpoint: Receiver;
let status = 503;
let w: DeliveryWorker;
let notifier: Notifier;
let admin: string;

/** A MIME message's subject and plain text, quoted-printable decoded. */
function parseMail(raw: string): { subject: string; text: string } {
  const [head, ...rest] = raw.split("\r\n\r\n");
  const unfolded = head.replace(/\r\n(?=[ \t])/g, "");
  const subject = /^Subject: (.*)$/m.exec(unfolded)?.[1] ?? "";
  const body = rest.join("\r\n\r\n");
  const qp = /Content-Transfer-Encoding: quoted-printable/i.test(head);
  const text = qp
    ? Buffer.from(
        body.replace(/=\r\n/g, "").replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
        "latin1",
      ).toString("utf8")
    : body;
  return { subject: decodeWords(subject), text };
}

function decodeWords(s: string): string {
  return s.replace(/=\?UTF-8\?Q\?([^?]*)\?=\s?/gi, (_, q: string) =>
    Buffer.from(
      q.replace(/_/g, " ").replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
      "latin1",
    ).toString("utf8"),
  );
}

const mailsTo = (addr: string) => mails.filter((m) => m.to.includes(addr));
const rows = async (where = "true") =>
  (
    await db.pool.query(
      `SELECT kind, channel, recipient, status, attempts, last_error, digest_count, digest_of, subject FROM notifications WHERE ${where} ORDER BY created_at, id`,
    )
  ).rows;

beforeAll(async () => {
  db = await createTestDatabase();
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, session, cb) {
      let raw = "";
      stream.on("data", (c: Buffer) => (raw += c.toString("latin1")));
      stream.on("end", () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), ...parseMail(Buffer.from(raw, "latin1").toString("latin1")) });
        cb();
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(0, "127.0.0.1", () => r()));
  smtpPort = (smtp.server.address() as AddressInfo).port;
  hook = await startReceiver((_q, res) => {
    res.statusCode = 200;
    res.end("ok");
  });
  endpoint = await startReceiver((req, res) => {
    res.statusCode = req.url?.startsWith("/gone") ? 410 : status;
    // Slack's link and mention syntax in the answer: a notice's webhook post must not pass it on as such.
    res.end(res.statusCode === 503 ? "maintenance <!channel> <https://evil.example/signin|Open hookledger> & retry" : "");
  });
  await db.pool.query("INSERT INTO tenants (id, name) VALUES ('lincoln', 'Lincoln USD'), ('jefferson', 'Jefferson County')");
  // One dead letter is over the threshold: the 410 below crosses it.
  await db.pool.query("UPDATE ops_settings SET dlq_threshold = 1");
  admin = await tokenFor(db.prisma, "admin");
  const fast = { ladderSeconds: [1, 1, 1, 1, 1, 1, 1, 1], maxAttempts: 50 };
  await createSub(db.pool, { id: "sub_lin", url: endpoint.url, retryPolicy: fast, maxConcurrency: 1 });
  // Its credential in the URL (an Azure Function's ?code=): every notice names the endpoint, none may carry it.
  await createSub(db.pool, {
    id: "sub_gone",
    url: `${endpoint.url.replace("/hooks", "/gone")}?code=${GONE_CODE}&district=lincoln`,
    retryPolicy: fast,
    maxConcurrency: 1,
  });
  await db.pool.query(
    "UPDATE subscriptions SET tenant = 'lincoln', name = 'Lincoln SIS', failure_window_seconds = 2, failure_min_attempts = 3, probe_interval_seconds = 1 WHERE id IN ('sub_lin', 'sub_gone')",
  );
  notifier = startNotifier({
    pool: db.pool,
    intervalMs: 3_600_000,
    mail: { url: `smtp://127.0.0.1:${smtpPort}`, from: "hookledger <notify@hookledger.test>" },
    allowPrivateTargets: true,
  });
}, 60_000);

afterAll(async () => {
  await w?.stop();
  await notifier?.stop();
  await hook?.close();
  await endpoint?.close();
  await new Promise<void>((r) => (smtp ? smtp.close(() => r()) : r()));
  await db?.close();
});

describe("contacts", () => {
  const put = (token: string, tenant: string, body: unknown) =>
    call(contactsRoute.PUT, { method: "PUT", path: `/api/v1/tenants/${tenant}/contacts`, token, params: { id: tenant }, body });

  it("refuses a malformed address with the field and its index, and saves nothing", async () => {
    const r = await put(admin, "lincoln", { emails: ["it@lincoln.example", "not an address"] });
    expect(r.status).toBe(400);
    expect(r.json.error.details).toEqual([expect.objectContaining({ path: "body.emails.1" })]);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM tenant_contacts")).rows[0].n).toBe(0);
  });

  it("refuses a private webhook URL unless private targets are allowed, and saves nothing", async () => {
    const before = process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS;
    delete process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS;
    try {
      const r = await put(admin, "lincoln", { emails: ["it@lincoln.example"], webhookUrl: "https://127.0.0.1/hook" });
      expect(r.status).toBe(400);
      expect(r.json.error.details).toEqual([expect.objectContaining({ path: "body.webhookUrl" })]);
      expect(r.json.error.message).toMatch(/^webhookUrl: .*loopback/);
    } finally {
      if (before === undefined) delete process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS;
      else process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS = before;
    }
    expect((await db.pool.query("SELECT count(*)::int AS n FROM tenant_contacts")).rows[0].n).toBe(0);
  });

  it("refuses a dead-letter threshold that is not a whole number from 1 to 100,000, naming it, and saves nothing", async () => {
    for (const dlqThreshold of [0, -3, 1.5, 100_001, "10"]) {
      const r = await put(admin, "lincoln", { emails: ["it@lincoln.example"], dlqThreshold });
      expect(r.status, JSON.stringify(dlqThreshold)).toBe(400);
      expect(r.json.error.details).toEqual([expect.objectContaining({ path: "body.dlqThreshold" })]);
    }
    expect((await db.pool.query("SELECT count(*)::int AS n FROM tenant_contacts")).rows[0].n).toBe(0);
  });

  it("lets a district's manager set its own tenant's, answers 404 for another tenant's, 403 for a global non-admin", async () => {
    const jeffManager = (await createApiToken(db.prisma, { role: "manager", tenantId: "jefferson" })).token;
    const linManager = (await createApiToken(db.prisma, { role: "manager", tenantId: "lincoln" })).token;
    const globalManager = await tokenFor(db.prisma, "manager");
    const body = { emails: ["it@lincoln.example", "Ops@Lincoln.example"], webhookUrl: hook.url };
    expect((await put(jeffManager, "lincoln", body)).status).toBe(404);
    expect((await call(contactsRoute.GET, { token: jeffManager, params: { id: "lincoln" } })).status).toBe(404);
    expect((await put(globalManager, "lincoln", body)).status).toBe(403);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM tenant_contacts")).rows[0].n).toBe(0);

    process.env.HOOKLEDGER_ALLOW_PRIVATE_TARGETS = "1";
    const r = await put(linManager, "lincoln", body);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ tenant: "lincoln", emails: ["it@lincoln.example", "ops@lincoln.example"], webhookUrl: hook.url });
    const got = await call(contactsRoute.GET, { token: linManager, params: { id: "lincoln" } });
    expect(got.json.emails).toEqual(["it@lincoln.example", "ops@lincoln.example"]);
    const audit = await db.pool.query("SELECT actor, details, tenant_id FROM audit_entries WHERE action = 'tenant.contacts.update'");
    expect(audit.rows).toEqual([
      { actor: expect.stringMatching(/^token:/), details: { emails: 2, webhookHost: new URL(hook.url).host, dlqThreshold: null }, tenant_id: "lincoln" },
    ]);
    // No threshold of its own: the operator's applies, and the answer says which.
    expect(got.json).toMatchObject({ dlqThreshold: null, defaultDlqThreshold: 1 });
    // Its own, then back to the operator's by leaving it out (PUT replaces every contact).
    const own = await put(linManager, "lincoln", { ...body, dlqThreshold: 5 });
    expect(own.json).toMatchObject({ dlqThreshold: 5, defaultDlqThreshold: 1 });
    expect((await db.pool.query("SELECT dlq_threshold FROM tenant_contacts WHERE tenant = 'lincoln'")).rows[0].dlq_threshold).toBe(5);
    expect((await put(linManager, "lincoln", body)).json.dlqThreshold).toBeNull();
    const details = (await db.pool.query("SELECT details FROM audit_entries WHERE action = 'tenant.contacts.update' ORDER BY id")).rows.map(
      (r) => r.details.dlqThreshold,
    );
    expect(details).toEqual([null, 5, null]);
  });
});

describe("the operator's defaults", () => {
  const putSettings = (token: string, body: unknown) => call(settingsRoute.PUT, { method: "PUT", path: "/api/v1/notifications/settings", token, body });

  it("a global admin sets the default dead-letter threshold, audited before and after; others are refused; a bad value saves nothing", async () => {
    const reader = (await createApiToken(db.prisma, { role: "support", tenantId: "lincoln" })).token;
    expect((await call(settingsRoute.GET, { token: reader })).json).toEqual({ dlqThreshold: 1 });
    const scopedAdmin = (await createApiToken(db.prisma, { role: "admin", tenantId: "lincoln" })).token;
    const manager = await tokenFor(db.prisma, "manager");
    expect((await putSettings(scopedAdmin, { dlqThreshold: 7 })).status).toBe(403);
    expect((await putSettings(manager, { dlqThreshold: 7 })).status).toBe(403);
    for (const dlqThreshold of [0, 100_001, 2.5, "7", null]) {
      const r = await putSettings(admin, { dlqThreshold });
      expect(r.status, JSON.stringify(dlqThreshold)).toBe(400);
      expect(r.json.error.details).toEqual([expect.objectContaining({ path: "body.dlqThreshold" })]);
    }
    expect((await db.pool.query("SELECT dlq_threshold FROM ops_settings")).rows).toEqual([{ dlq_threshold: 1 }]);
    const r = await putSettings(admin, { dlqThreshold: 7 });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ dlqThreshold: 7 });
    expect((await putSettings(admin, { dlqThreshold: 7 })).json).toEqual({ dlqThreshold: 7 }); // the same again: no second audit row
    // A district without its own sees the new default in its contacts.
    expect((await call(contactsRoute.GET, { token: reader, params: { id: "lincoln" } })).json.defaultDlqThreshold).toBe(7);
    const audit = await db.pool.query("SELECT actor, target_type, target_id, details, tenant_id FROM audit_entries WHERE action = 'notifications.settings.update'");
    expect(audit.rows).toEqual([
      { actor: expect.stringMatching(/^token:/), target_type: "settings", target_id: "notifications", details: { dlqThreshold: { from: 1, to: 7 } }, tenant_id: null },
    ]);
    // Back to the threshold the notices below were written for.
    expect((await putSettings(admin, { dlqThreshold: 1 })).status).toBe(200);
  });
});

describe("notices", () => {
  it("a subscription paused for failing: one e-mail to each contact with the last answer and the link, and one webhook post", async () => {
    w = worker(db.url);
    await seedEvents(db.pool, "evt_lin_a_", 3, ["sub_lin"], "lincoln");
    await waitFor(async () => (await db.pool.query("SELECT state FROM subscriptions WHERE id = 'sub_lin'")).rows[0].state === "paused", 30_000, "the pause");
    await notifier.tick();
    await waitFor(async () => mails.length >= 2 && hook.received.length >= 1, 10_000, "two e-mails and a webhook post");
    for (const to of ["it@lincoln.example", "ops@lincoln.example"]) {
      const [m] = mailsTo(to);
      expect(m.subject).toMatch(/^Lincoln USD: your endpoint http:\/\/127\.0\.0\.1:\d+\/hooks is paused after failing since \d\d:\d\d UTC$/);
      expect(m.text).toContain("answered HTTP 503 “maintenance <!channel> <https://evil.example/signin|Open hookledger> & retry”");
      expect(m.text).toContain("/subscriptions/sub_lin");
      expect(m.text).toMatch(/Deliveries are held, not dropped: nothing is lost/);
    }
    expect(mails).toHaveLength(2);
    expect(hook.received).toHaveLength(1);
    const text = JSON.parse(hook.received[0].body.toString()).text as string;
    expect(text).toMatch(/is paused after failing/);
    expect(text).toContain("answered HTTP 503 “maintenance &lt;!channel&gt; &lt;https://evil.example/signin|Open hookledger&gt; &amp; retry”");
    expect(text).not.toMatch(/[<>]/);
    // A contact's webhook has no secret: the post carries no signature header rather than an empty one.
    expect(hook.received[0].headers).not.toHaveProperty("webhook-signature");
    expect(hook.received[0].headers["webhook-id"]).toMatch(/^ntf_/);
    expect(await rows()).toEqual([
      expect.objectContaining({ kind: "paused", channel: "email", status: "sent", attempts: 1 }),
      expect.objectContaining({ kind: "paused", channel: "email", status: "sent", attempts: 1 }),
      expect.objectContaining({ kind: "paused", channel: "webhook", recipient: hook.url, status: "sent" }),
    ]);
    // Read again (the events behind the cursor are re-read for late commits): no second notice.
    await notifier.tick();
    expect(mails).toHaveLength(2);
  });

  it("resumed after a probe: a recovered notice", async () => {
    status = 200;
    await waitFor(async () => (await db.pool.query("SELECT state FROM subscriptions WHERE id = 'sub_lin'")).rows[0].state === "active", 15_000, "the resume");
    await notifier.tick();
    await waitFor(async () => mails.length >= 4, 10_000, "the recovered e-mails");
    expect(mailsTo("it@lincoln.example").at(-1)!.subject).toMatch(/is back: deliveries resumed$/);
    expect((await rows("kind = 'recovered'")).map((r) => r.status)).toEqual(["sent", "sent", "sent"]);
  });

  it("a delivery after a dead letter, never paused: the ops stream says recovered, the district is told nothing", async () => {
    // Held by a manual pause, so the worker leaves its deliveries to the SQL below: one dead-lettered, then one delivered,
    // as an endpoint that refuses one kind of event and takes the rest would have them.
    await createSub(db.pool, { id: "sub_mixed", url: endpoint.url, state: "paused" });
    await db.pool.query("UPDATE subscriptions SET tenant = 'lincoln', name = 'Lincoln gradebook' WHERE id = 'sub_mixed'");
    await seedEvents(db.pool, "evt_mixed_", 2, ["sub_mixed"], "lincoln");
    const ids = (await db.pool.query("SELECT id FROM deliveries WHERE subscription_id = 'sub_mixed' ORDER BY id")).rows.map((r) => r.id);
    await db.pool.query("UPDATE deliveries SET state = 'dead_letter', dead_lettered_at = now(), dead_letter_reason = 'permanent' WHERE id = $1", [ids[0]]);
    await db.pool.query("UPDATE deliveries SET state = 'delivered', delivered_at = now() WHERE id = $1", [ids[1]]);
    const ops = await db.pool.query(
      "SELECT 1 FROM events WHERE type = 'hookledger.subscription.recovered' AND convert_from(payload, 'UTF8')::jsonb -> 'data' ->> 'deliveryId' = $1",
      [ids[1]],
    );
    expect(ops.rows, "the operators' stream has its recovered event").toHaveLength(1);
    const before = (await rows("kind = 'recovered'")).length;
    await notifier.tick();
    expect(await rows("kind = 'recovered'")).toHaveLength(before);
  });

  it("a second pause within the hour is folded into a digest, sent as 'and N more' when the hour ends", async () => {
    status = 503;
    await seedEvents(db.pool, "evt_lin_b_", 3, ["sub_lin"], "lincoln");
    await waitFor(async () => (await db.pool.query("SELECT state FROM subscriptions WHERE id = 'sub_lin'")).rows[0].state === "paused", 30_000, "the second pause");
    const mailsBefore = mails.length;
    await notifier.tick();
    expect(mails.length).toBe(mailsBefore);
    const paused = await rows("kind = 'paused'");
    expect(paused.filter((r) => r.status === "suppressed")).toHaveLength(3);
    const digests = paused.filter((r) => r.digest_count > 0);
    expect(digests).toHaveLength(3);
    expect(digests.every((d) => d.status === "pending" && d.digest_count === 1)).toBe(true);
    const due = await db.pool.query(
      "SELECT extract(epoch FROM next_attempt_at - (SELECT created_at FROM notifications f WHERE f.id = n.digest_of))::int AS after FROM notifications n WHERE digest_count > 0",
    );
    expect(due.rows.map((r) => r.after)).toEqual([3600, 3600, 3600]);
    // The hour ends.
    await db.pool.query("UPDATE notifications SET next_attempt_at = now() WHERE digest_count > 0");
    await notifier.tick();
    await waitFor(async () => mails.length >= mailsBefore + 2, 10_000, "the digest e-mails");
    expect(mailsTo("it@lincoln.example").at(-1)!.subject).toMatch(/is paused after failing since .* \(and 1 more in the last hour\)$/);
  });

  it("disabled by a 410: a disabled notice", async () => {
    await seedEvents(db.pool, "evt_gone_", 1, ["sub_gone"], "lincoln");
    await waitFor(async () => (await db.pool.query("SELECT state FROM subscriptions WHERE id = 'sub_gone'")).rows[0].state === "disabled", 15_000, "the 410");
    await notifier.tick();
    await waitFor(async () => mailsTo("it@lincoln.example").some((m) => /disabled: it answered 410 Gone$/.test(m.subject)), 10_000, "the disabled e-mail");
    expect((await rows("kind = 'disabled'")).map((r) => r.status)).toEqual(["sent", "sent", "sent"]);
    // Its dead letter crossed the threshold (1 here): hookledger.dlq.threshold_exceeded made a notice too.
    const m = mailsTo("it@lincoln.example").find((x) => /: 1 dead letter for /.test(x.subject));
    expect(m?.text).toMatch(/^1 delivery to .* is a dead letter \(the alert threshold is 1\)/m);
    expect((await rows("kind = 'dlq_threshold' AND subscription_id = 'sub_gone'")).map((r) => r.status)).toEqual(["sent", "sent", "sent"]);
    // The endpoint is named with its credential masked: in the stored notices, the e-mails and the webhook's posts.
    const stored = (await db.pool.query("SELECT subject, body FROM notifications WHERE subscription_id = 'sub_gone'")).rows;
    expect(stored.length).toBeGreaterThan(0);
    for (const n of stored) {
      expect(`${n.subject}\n${n.body}`).not.toContain(GONE_CODE);
      expect(`${n.subject}\n${n.body}`).toContain("/gone?code=****&district=lincoln");
    }
    expect(mails.map((x) => `${x.subject}\n${x.text}`).join("\n")).not.toContain(GONE_CODE);
    expect(hook.received.map((r) => r.body.toString()).join("\n")).not.toContain(GONE_CODE);
  });

  it("a district with no contacts: what it would have been told is recorded as not sent, to nobody, and never sent", async () => {
    await db.pool.query("INSERT INTO tenants (id, name) VALUES ('garfield', 'Garfield USD')");
    await createSub(db.pool, { id: "sub_gar_gone", url: endpoint.url.replace("/hooks", "/gone"), maxConcurrency: 1 });
    await db.pool.query("UPDATE subscriptions SET tenant = 'garfield', name = 'Garfield SIS' WHERE id = 'sub_gar_gone'");
    await seedEvents(db.pool, "evt_gar_", 1, ["sub_gar_gone"], "garfield");
    await waitFor(async () => (await db.pool.query("SELECT state FROM subscriptions WHERE id = 'sub_gar_gone'")).rows[0].state === "disabled", 15_000, "the 410");
    const [mailsBefore, hooksBefore] = [mails.length, hook.received.length];
    await notifier.tick();
    await notifier.tick();
    const kept = await rows("tenant = 'garfield'");
    expect(kept).toHaveLength(2);
    expect(kept).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          kind: "disabled",
          channel: "none",
          recipient: "",
          status: "unaddressed",
          attempts: 0,
          subject: expect.stringMatching(/disabled: it answered 410 Gone$/),
        }),
        expect.objectContaining({ kind: "dlq_threshold", channel: "none", recipient: "", status: "unaddressed", attempts: 0 }),
      ]),
    );
    expect([mails.length, hook.received.length]).toEqual([mailsBefore, hooksBefore]);
    const listed = await call(notificationsRoute.GET, { token: admin, path: "/api/v1/notifications?tenant=garfield" });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.json.items.map((n: { channel: string; status: string }) => [n.channel, n.status])).toEqual([
      ["none", "unaddressed"],
      ["none", "unaddressed"],
    ]);
  });

  it("dead letters waiting over a day (the sampler's oldest): one notice per oldest dead letter", async () => {
    await db.pool.query("INSERT INTO dlq_samples (sampled_at, depth, oldest_at) VALUES (now(), 4, now() - interval '30 hours')");
    await db.pool.query(
      `INSERT INTO dlq_sample_groups (sampled_at, subscription_id, reason, depth, oldest_at)
       SELECT sampled_at, 'sub_gone', 'gone', 4, now() - interval '30 hours' FROM dlq_samples`,
    );
    await notifier.tick();
    await waitFor(
      async () => mailsTo("it@lincoln.example").some((m) => /: dead letters for .* have waited since /.test(m.subject)),
      10_000,
      "the old dead letters e-mail",
    );
    expect(mailsTo("ops@lincoln.example").find((m) => /have waited since/.test(m.subject))!.text).toMatch(/^4 deliveries to .* are dead letters/m);
    await notifier.tick();
    expect(await rows("kind = 'dlq_old'")).toHaveLength(3);
  });

  it("with no dashboard sampling, the notifier samples the dead letters itself; a stale sample tells of nothing", async () => {
    const before = (await rows("kind = 'dlq_old'")).length;
    // sub_gone's real dead letter (the 410 above), dead-lettered 40 hours ago; no sample newer than the notifier's interval.
    await db.pool.query("UPDATE deliveries SET dead_lettered_at = now() - interval '40 hours' WHERE subscription_id = 'sub_gone' AND state = 'dead_letter'");
    await db.pool.query("DELETE FROM dlq_sample_groups");
    await db.pool.query("DELETE FROM dlq_samples");
    // A sample from an hour ago (a dashboard that has since stopped) showing old dead letters: too old to be told of.
    await db.pool.query("INSERT INTO dlq_samples (sampled_at, depth, oldest_at) VALUES (now() - interval '1 hour', 9, now() - interval '50 hours')");
    await db.pool.query(
      `INSERT INTO dlq_sample_groups (sampled_at, subscription_id, reason, depth, oldest_at)
       SELECT sampled_at, 'sub_gone', 'gone', 9, now() - interval '50 hours' FROM dlq_samples`,
    );
    const { ingestRound } = await import("../../lib/notify/ingest");
    await ingestRound(db.pool);
    expect(await rows("kind = 'dlq_old'")).toHaveLength(before);
    // The notifier's tick samples first (the newest sample is older than its interval), then tells of the real one.
    await notifier.tick();
    const sample = (await db.pool.query("SELECT depth FROM dlq_samples WHERE sampled_at > now() - interval '1 minute'")).rows;
    expect(sample).toHaveLength(1);
    const depth = Number((await db.pool.query("SELECT count(*) AS n FROM deliveries WHERE state = 'dead_letter'")).rows[0].n);
    expect(sample[0].depth).toBe(depth);
    // One notice per contact (two e-mails, the webhook) of the real dead letter; folded into the hourly digest, as the
    // earlier dlq_old notice of this subscription went out within the hour.
    const source = (
      await db.pool.query(
        "SELECT 'dlq-old:sub_gone:' || extract(epoch FROM min(dead_lettered_at))::bigint AS s FROM deliveries WHERE subscription_id = 'sub_gone' AND state = 'dead_letter'",
      )
    ).rows[0].s;
    const made = (await db.pool.query("SELECT recipient, body FROM notifications WHERE kind = 'dlq_old' AND source = $1 ORDER BY recipient", [source])).rows;
    expect(made.map((r) => r.recipient)).toHaveLength(3);
    for (const r of made) expect(r.body).toMatch(/^1 delivery to .* is a dead letter/m);
    expect((await rows("kind = 'dlq_old'")).length).toBeGreaterThan(before);
    // Fresh now: the next tick takes no second sample.
    await notifier.tick();
    expect((await db.pool.query("SELECT count(*)::int AS n FROM dlq_samples WHERE sampled_at > now() - interval '1 minute'")).rows[0].n).toBe(1);
  });

  it("a signing secret's overlap ending within 24 h: one notice, once", async () => {
    await db.pool.query(
      "INSERT INTO subscription_secrets (id, subscription_id, secret, expires_at) VALUES ('sec_old_gone', 'sub_gone', 'x', now() + interval '3 hours')",
    );
    await notifier.tick();
    await waitFor(async () => mailsTo("ops@lincoln.example").some((m) => /the previous signing secret stops working at/.test(m.subject)), 10_000, "the secret e-mail");
    await notifier.tick();
    expect(await rows("kind = 'secret_expiring'")).toHaveLength(3);
  });

  it("SMTP down: e-mail retried, then recorded failed with the reason; the webhook is unaffected. No SMTP: failed at once, saying so", async () => {
    await w.stop();
    const down = startNotifier({
      pool: db.pool,
      intervalMs: 3_600_000,
      mail: { url: "smtp://127.0.0.1:9", from: "x@y.test" },
      retryDelaysMs: [1, 1],
      allowPrivateTargets: true,
    });
    const none = startNotifier({ pool: db.pool, intervalMs: 3_600_000, mail: null, allowPrivateTargets: true });
    try {
      const hooksBefore = hook.received.length;
      await db.pool.query(
        "INSERT INTO subscription_secrets (id, subscription_id, secret, expires_at) VALUES ('sec_old_lin', 'sub_lin', 'x', now() + interval '3 hours')",
      );
      for (let i = 0; i < 3; i++) {
        await down.tick();
        await new Promise((r) => setTimeout(r, 20));
      }
      const r = await rows("source = 'secret:sec_old_lin'");
      expect(r.filter((x) => x.channel === "email")).toEqual([
        expect.objectContaining({ status: "failed", attempts: 3, last_error: expect.stringMatching(/ECONNREFUSED|connect/i) }),
        expect.objectContaining({ status: "failed", attempts: 3 }),
      ]);
      expect(r.filter((x) => x.channel === "webhook")).toEqual([expect.objectContaining({ status: "sent", attempts: 1 })]);
      expect(hook.received.length).toBe(hooksBefore + 1);

      // Another subscription: a second notice of the kind about sub_lin within the hour would be folded into its digest.
      await createSub(db.pool, { id: "sub_lin2", url: endpoint.url, state: "paused" });
      await db.pool.query("UPDATE subscriptions SET tenant = 'lincoln' WHERE id = 'sub_lin2'");
      await db.pool.query(
        "INSERT INTO subscription_secrets (id, subscription_id, secret, expires_at) VALUES ('sec_old_lin2', 'sub_lin2', 'x', now() + interval '5 hours')",
      );
      await none.tick();
      const n = await rows("source = 'secret:sec_old_lin2' AND channel = 'email'");
      expect(n).toEqual([
        expect.objectContaining({ status: "failed", attempts: 1, last_error: "no SMTP configured (HOOKLEDGER_SMTP_URL is not set)" }),
        expect.objectContaining({ status: "failed", attempts: 1 }),
      ]);
    } finally {
      await down.stop();
      await none.stop();
    }
  });

  it("GET /api/v1/notifications lists a tenant's own notices only", async () => {
    const jeff = (await createApiToken(db.prisma, { role: "support", tenantId: "jefferson" })).token;
    const lin = (await createApiToken(db.prisma, { role: "support", tenantId: "lincoln" })).token;
    expect((await call(notificationsRoute.GET, { token: jeff, path: "/api/v1/notifications" })).json.items).toEqual([]);
    const r = await call(notificationsRoute.GET, { token: lin, path: "/api/v1/notifications?limit=5" });
    expect(r.status).toBe(200);
    expect(r.json.items).toHaveLength(5);
    expect(r.json.items[0]).toMatchObject({ tenant: "lincoln", channel: expect.any(String), status: expect.any(String) });
    expect(r.json.nextBefore).toBe(r.json.items[4].createdAt);
  });

  it("a one-subscription scope (a portal link for one endpoint) lists that subscription's notices only", async () => {
    const all = await listNotifications(db.pool, { tenantId: "lincoln" }, { limit: 500 });
    const subs = [...new Set(all.map((n) => n.subscriptionId))];
    expect(subs.length).toBeGreaterThan(1);
    const one = subs.find((s) => s !== null)!;
    const mine = await listNotifications(db.pool, { tenantId: "lincoln", subscriptionId: one }, { limit: 500 });
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((n) => n.subscriptionId === one)).toBe(true);
    expect(mine).toHaveLength(all.filter((n) => n.subscriptionId === one).length);
    expect(await listNotifications(db.pool, { tenantId: "jefferson", subscriptionId: one }, { limit: 500 })).toEqual([]);
  });
});

describe("paging", () => {
  // The notifier writes a round's notices in one transaction, so they share one created_at (QA saw 111 at one instant):
  // 250 of Adams' at one microsecond, 20 a microsecond before it (the same millisecond), 10 an hour later; 30 of Bell's
  // at the same instant. Paging by the time alone lost every notice of the instant after the first page.
  const T0 = "2026-12-06 05:39:03.362417+00";
  type Page = { items: { id: string; tenant: string; createdAt: string }[]; nextCursor: string | null; nextBefore: string | null };
  let adamsToken: string;
  let bellToken: string;

  const insert = (tenant: string, n: number, at: string, tag: string) =>
    db.pool.query(
      `INSERT INTO notifications (id, tenant, subscription_id, kind, channel, recipient, subject, body, source, status, attempts, sent_at, created_at)
       SELECT hl_new_id('ntf_'), $1, NULL, 'dlq_threshold', 'email', 'it@' || $1 || '.example', 'notice ' || i, 'body', 'paging:' || $4 || ':' || i, 'sent', 1, $3::timestamptz, $3::timestamptz
         FROM generate_series(1, $2::int) i`,
      [tenant, n, at, tag],
    );
  /** The ids the database orders (created_at desc, id desc), in a scope. */
  const expected = async (where = "true") =>
    (await db.pool.query(`SELECT id FROM notifications WHERE ${where} ORDER BY created_at DESC, id DESC`)).rows.map((r) => r.id as string);
  /** Every page from the first, following nextCursor; the pages as answered. */
  async function pageThrough(token: string, limit: number): Promise<Page[]> {
    const pages: Page[] = [];
    let cursor: string | null = null;
    do {
      const r = await call(notificationsRoute.GET, { token, path: `/api/v1/notifications?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}` });
      expect(r.status, r.text).toBe(200);
      pages.push(r.json as Page);
      cursor = (r.json as Page).nextCursor;
      expect(pages.length, "pages end").toBeLessThan(1000);
    } while (cursor);
    return pages;
  }

  beforeAll(async () => {
    await db.pool.query("INSERT INTO tenants (id, name) VALUES ('adams', 'Adams 12'), ('bell', 'Bell Unified')");
    await insert("adams", 250, T0, "a0");
    await insert("adams", 20, "2026-12-06 05:39:03.362416+00", "a-1");
    await insert("adams", 10, "2026-12-06 06:39:03.362417+00", "a+1");
    await insert("bell", 30, T0, "b0");
    adamsToken = (await createApiToken(db.prisma, { role: "support", tenantId: "adams" })).token;
    bellToken = (await createApiToken(db.prisma, { role: "support", tenantId: "bell" })).token;
  });

  it("a tenant's notices of one instant, 7 and 100 at a time: each exactly once, newest first, ties by id; nextCursor null on the last page, which is not empty", async () => {
    const want = await expected("tenant = 'adams'");
    expect(want).toHaveLength(280);
    for (const limit of [7, 100]) {
      const pages = await pageThrough(adamsToken, limit);
      const ids = pages.flatMap((p) => p.items.map((n) => n.id));
      expect(ids, `limit ${limit}`).toEqual(want);
      expect(pages.flatMap((p) => p.items).every((n) => n.tenant === "adams")).toBe(true);
      expect(pages).toHaveLength(Math.ceil(280 / limit));
      expect(pages.at(-1)!.items.length, "the last page holds the last notices, not nothing").toBeGreaterThan(0);
      expect(pages.at(-1)!.nextCursor).toBeNull();
      expect(pages.at(-1)!.nextBefore).toBeNull();
      expect(pages.slice(0, -1).every((p) => p.items.length === limit && p.nextCursor !== null)).toBe(true);
    }
  });

  it("a global reader pages through every tenant's notices; another tenant's token sees its own only", async () => {
    const all = (await pageThrough(admin, 100)).flatMap((p) => p.items.map((n) => n.id));
    expect(all).toEqual(await expected());
    const bell = (await pageThrough(bellToken, 7)).flatMap((p) => p.items);
    expect(bell.map((n) => n.id)).toEqual(await expected("tenant = 'bell'"));
    expect(bell.every((n) => n.tenant === "bell")).toBe(true);
  });

  it("tenant= lists one tenant's notices, paged by cursor; a confined caller naming another tenant reads nothing; a tenant too long is a 400", async () => {
    const bell = await expected("tenant = 'bell'");
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const r = await call(notificationsRoute.GET, { token: admin, path: `/api/v1/notifications?tenant=bell&limit=7${cursor ? `&cursor=${cursor}` : ""}` });
      expect(r.status, r.text).toBe(200);
      const page = r.json as Page;
      expect(page.items.every((n) => n.tenant === "bell")).toBe(true);
      ids.push(...page.items.map((n) => n.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(ids).toEqual(bell);
    // Its own tenant named: the same list; another's: nothing, never that tenant's notices.
    expect(((await call(notificationsRoute.GET, { token: bellToken, path: "/api/v1/notifications?tenant=bell&limit=500" })).json as Page).items.map((n) => n.id)).toEqual(
      bell,
    );
    const other = await call(notificationsRoute.GET, { token: adamsToken, path: "/api/v1/notifications?tenant=bell" });
    expect(other.status).toBe(200);
    expect(other.json).toMatchObject({ items: [], nextCursor: null });
    // An unknown tenant: an empty list, as the subscriptions list answers.
    expect((await call(notificationsRoute.GET, { token: admin, path: "/api/v1/notifications?tenant=nobody" })).json.items).toEqual([]);
    // Adams' cursor is no place in Bell's list.
    const adamsCursor = ((await call(notificationsRoute.GET, { token: admin, path: "/api/v1/notifications?tenant=adams&limit=7" })).json as Page).nextCursor!;
    const crossed = await call(notificationsRoute.GET, { token: admin, path: `/api/v1/notifications?tenant=bell&cursor=${adamsCursor}` });
    expect(crossed.status, crossed.text).toBe(400);
    expect(crossed.json.error.message).toMatch(/^query\.cursor: /);
    const long = await call(notificationsRoute.GET, { token: admin, path: `/api/v1/notifications?tenant=${"t".repeat(201)}` });
    expect(long.status, long.text).toBe(400);
    expect(JSON.stringify(long.json.error)).toContain("query.tenant");
  });

  it("a cursor that is not one this list answered (or another tenant's) is a 400 naming query.cursor, never a 500", async () => {
    const first = await call(notificationsRoute.GET, { token: adamsToken, path: "/api/v1/notifications?limit=7" });
    const adamsCursor = (first.json as Page).nextCursor!;
    expect(adamsCursor).toEqual(expect.any(String));
    // As they stand in the URL.
    for (const [token, cursor] of [
      [adamsToken, "garbage!!"],
      [adamsToken, "ntf_0000000000000000000000000000"],
      [adamsToken, "x".repeat(5000)],
      [adamsToken, encodeURIComponent(`${adamsCursor}'; --`)],
      [admin, "%00"],
      [admin, `${adamsCursor}%00`],
      [admin, "%FF%FE"],
      [admin, ""],
      [bellToken, adamsCursor],
    ] as const) {
      const r = await call(notificationsRoute.GET, { token, path: `/api/v1/notifications?limit=7&cursor=${cursor}` });
      expect(r.status, `${cursor.slice(0, 40)}: ${r.text}`).toBe(400);
      expect(r.json.error.code).toBe("validation_failed");
      expect(r.json.error.message).toMatch(/^query\.cursor: /);
    }
  });

  it("before=<createdAt> still pages as before (notices strictly older than it), with nextBefore beside nextCursor", async () => {
    const before = "2026-12-06T06:00:00.000Z";
    const r = await call(notificationsRoute.GET, { token: adamsToken, path: `/api/v1/notifications?limit=7&before=${before}` });
    expect(r.status, r.text).toBe(200);
    const page = r.json as Page;
    expect(page.items.map((n) => n.id)).toEqual((await expected(`tenant = 'adams' AND created_at < '${before}'`)).slice(0, 7));
    expect(page.nextBefore).toBe(page.items[6].createdAt);
    const next = await call(notificationsRoute.GET, { token: adamsToken, path: `/api/v1/notifications?limit=7&before=${before}&cursor=${page.nextCursor}` });
    expect((next.json as Page).items.map((n) => n.id)).toEqual((await expected(`tenant = 'adams' AND created_at < '${before}'`)).slice(7, 14));
  });

  it("the typed client: notifications.list takes the cursor, listAll follows it to the end", async () => {
    const { startApiServer } = await import("../helpers/client-server");
    const { HookledgerClient } = await import("../../client/src/index");
    const server = await startApiServer();
    try {
      const client = new HookledgerClient({ baseUrl: server.url, token: adamsToken });
      const want = await expected("tenant = 'adams'");
      const first = await client.notifications.list({ limit: 7, tenant: "adams" });
      const second = await client.notifications.list({ limit: 7, cursor: first.nextCursor! });
      expect([...first.items, ...second.items].map((n) => n.id)).toEqual(want.slice(0, 14));
      const all: string[] = [];
      for await (const n of client.notifications.listAll({ limit: 100 })) all.push(n.id);
      expect(all).toEqual(want);
    } finally {
      await server.close();
    }
  });
});

// The simulator control page: every simulated district with what it received
// and applied, a fix switch per district, and the traffic generator's knobs.
// HTML for people (works without JavaScript; a small script refreshes it), JSON
// for scripts and tests:
//
//   GET  /api/state                       districts, traffic, links
//   GET  /api/districts/:slug             one district's status
//   POST /api/districts/:slug/fix         {fixed?: boolean} (default true)
//   POST /api/districts/:slug/break       the same as {fixed: false}
//   POST /api/traffic                     {paused?: boolean, eventsPerSecond?: number}
import http from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";
import { esc, loopbackHost, PAGE_CSS, renderDistrictPage, type District } from "./districts";
import type { Traffic } from "./traffic";

export type ControlContext = {
  districts: District[];
  traffic: Traffic;
  dashboardUrl: string;
  signIn?: { email: string; password: string | null };
  signatureLibrary: string;
  /** hookledger's view of each demo subscription (state, reason), refreshed by the caller. */
  subscriptions?: () => Map<string, { state: string; stateReason: string | null }>;
  onChange: () => void;
};

const ZFix = z.object({ fixed: z.boolean().optional() }).strict();
const ZTraffic = z.object({ paused: z.boolean().optional(), eventsPerSecond: z.number().min(0).max(200).optional() }).strict();

export function stateJson(ctx: ControlContext) {
  return {
    dashboardUrl: ctx.dashboardUrl,
    signIn: ctx.signIn ? { email: ctx.signIn.email } : null,
    traffic: {
      runId: ctx.traffic.runId,
      paused: ctx.traffic.paused,
      eventsPerSecond: ctx.traffic.eventsPerSecond,
      published: ctx.traffic.published,
      errors: ctx.traffic.errors,
      lastError: ctx.traffic.lastError ?? null,
      recent: [...ctx.traffic.recent].reverse(),
      tickets: [...ctx.traffic.ticketable].reverse(),
    },
    districts: ctx.districts.map((d) => ({ ...d.status(), subscription: ctx.subscriptions?.().get(d.info.subscriptionId) ?? null })),
  };
}

export async function startControlServer(ctx: ControlContext, port: number): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    handle(ctx, req, res).catch((err) => send(res, 500, { error: { code: "internal", message: (err as Error).message } }));
  });
  const listen = (p: number) =>
    new Promise<number>((resolve, reject) => {
      server.once("error", reject);
      server.listen(p, "127.0.0.1", () => {
        server.off("error", reject);
        resolve((server.address() as AddressInfo).port);
      });
    });
  let actual: number;
  try {
    actual = await listen(port);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE" || port === 0) throw err;
    actual = await listen(0);
  }
  return {
    url: `http://127.0.0.1:${actual}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(ctx: ControlContext, req: http.IncomingMessage, res: http.ServerResponse) {
  if (!loopbackHost(req.headers.host))
    return send(res, 421, {
      error: {
        code: "misdirected_request",
        message: "The demo's control page answers on this machine only: open it at http://127.0.0.1:<port> or http://localhost:<port>.",
      },
    });
  const url = new URL(req.url ?? "/", "http://x");
  const p = url.pathname;
  if (req.method === "GET") {
    if (p === "/") return html(res, renderControlPage(ctx));
    if (p === "/fragment") return html(res, renderLive(ctx));
    if (p === "/api/state") return send(res, 200, stateJson(ctx));
    const m = p.match(/^\/(api\/)?districts\/([a-z]+)$/);
    if (m) {
      const d = ctx.districts.find((x) => x.info.slug === m[2]);
      if (!d)
        return send(res, 404, {
          error: { code: "not_found", message: `No simulated district ${m[2]}; try one of ${ctx.districts.map((x) => x.info.slug).join(", ")}.` },
        });
      return m[1] ? send(res, 200, d.status()) : html(res, renderDistrictPage(d.status()));
    }
    return send(res, 404, { error: { code: "not_found", message: `No page ${p}. The control page is /, its JSON /api/state.` } });
  }
  if (req.method !== "POST") return send(res, 405, { error: { code: "method_not_allowed", message: "GET or POST" } });

  // A form posted from another site must not flip the switches.
  const origin = req.headers.origin;
  if (origin && origin !== "null" && new URL(origin).host !== req.headers.host)
    return send(res, 403, { error: { code: "forbidden", message: "cross-origin POST refused" } });

  const form = (req.headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded");
  const raw = await readText(req);
  let body: Record<string, unknown> = {};
  try {
    if (form) {
      const f = new URLSearchParams(raw);
      if (f.has("fixed")) body.fixed = f.get("fixed") === "true";
      if (f.has("paused")) body.paused = f.get("paused") === "true";
      if (f.has("eventsPerSecond")) body.eventsPerSecond = Number(f.get("eventsPerSecond"));
    } else if (raw.trim()) body = JSON.parse(raw);
  } catch {
    return send(res, 400, { error: { code: "invalid_json", message: "the body is not JSON" } });
  }
  const done = (payload: unknown) => {
    ctx.onChange();
    if (form) {
      res.writeHead(303, { location: "/" });
      return res.end();
    }
    send(res, 200, payload);
  };

  const m = p.match(/^\/api\/districts\/([a-z]+)\/(fix|break)$/);
  if (m) {
    const d = ctx.districts.find((x) => x.info.slug === m[1]);
    if (!d) return send(res, 404, { error: { code: "not_found", message: `No simulated district ${m[1]}.` } });
    const parsed = ZFix.safeParse(body);
    if (!parsed.success)
      return send(res, 400, { error: { code: "validation_failed", message: parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; ") } });
    d.setFixed(m[2] === "break" ? false : (parsed.data.fixed ?? true));
    return done(d.status());
  }
  if (p === "/api/traffic") {
    const parsed = ZTraffic.safeParse(body);
    if (!parsed.success)
      return send(res, 400, { error: { code: "validation_failed", message: parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; ") } });
    if (parsed.data.paused !== undefined) ctx.traffic.paused = parsed.data.paused;
    if (parsed.data.eventsPerSecond !== undefined) ctx.traffic.eventsPerSecond = parsed.data.eventsPerSecond;
    return done(stateJson(ctx).traffic);
  }
  return send(res, 404, { error: { code: "not_found", message: `No endpoint POST ${p}.` } });
}

function readText(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let s = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => {
      s += c;
      if (s.length > 64 * 1024) req.destroy();
    });
    req.on("end", () => resolve(s));
    req.on("error", reject);
  });
}

function send(res: http.ServerResponse, status: number, payload: unknown) {
  if (res.headersSent) return;
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(payload));
}

function html(res: http.ServerResponse, body: string) {
  res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
  res.end(body);
}

function renderLive(ctx: ControlContext): string {
  const t = ctx.traffic;
  const rows = ctx.districts
    .map((d) => {
      const s = d.status();
      const st = s.stats;
      const answers = Object.entries(st.byStatus)
        .sort()
        .map(([k, v]) => `<span class="pill">${esc(k)}: ${v}</span>`)
        .join(" ");
      const next = !s.fixed;
      const sub = ctx.subscriptions?.().get(s.subscriptionId);
      const subState = sub
        ? sub.state === "active"
          ? ""
          : `<br><span class="state-broken">subscription ${esc(sub.state)}</span>${sub.stateReason ? `: <span class="muted">${esc(sub.stateReason)}</span>` : ""}${sub.state === "disabled" && s.fixed ? '<br><span class="muted">Reactivate it in the dashboard, then redrive.</span>' : ""}`
        : "";
      return `<tr>
<td><b>${esc(s.name)}</b><br><span class="muted">${esc(s.behaviour)}</span><br><a href="${esc(s.statusUrl)}">status page</a> · <a href="${esc(ctx.dashboardUrl.replace(/\/$/, ""))}/subscriptions/${esc(s.subscriptionId)}"><code>${esc(s.subscriptionId)}</code></a>${subState}</td>
<td><span class="${s.fixed ? "state-fixed" : "state-broken"}">${s.fixed ? "fixed" : "broken"}</span><br><span class="muted">${esc(s.fixed ? s.fixedBehaviour : s.brokenBehaviour)}</span></td>
<td><form method="post" action="/api/districts/${s.slug}/fix"><input type="hidden" name="fixed" value="${next}"><button class="${next ? "fix" : ""}" type="submit">${esc(next ? s.fixLabel : s.breakLabel)}</button></form></td>
<td>${st.received}</td><td>${st.uniqueApplied}</td><td>${st.duplicatesIgnored}</td>
<td class="${st.duplicatesApplied ? "bad" : "ok"}">${st.duplicatesApplied ? `${st.duplicatesApplied} duplicate rows` : "never"}</td>
<td>${answers || '<span class="muted">none yet</span>'}</td></tr>`;
    })
    .join("");
  const recent = [...t.recent]
    .reverse()
    .slice(0, 12)
    .map(
      (e) =>
        `<tr><td>${esc(e.at.slice(11, 19))}</td><td><code>${esc(e.eventId)}</code></td><td>${esc(e.type)}</td><td>${esc(e.tenant)}</td><td>${code(e.studentId)}</td><td>${code(e.assignmentId)}</td><td>${e.type === "assignment.graded" && !e.hasTermId ? "no term_id" : ""}</td></tr>`,
    )
    .join("");
  const t0 = t.ticketable.at(-1);
  const district = t0 && ctx.districts.find((d) => d.info.slug === t0.tenant);
  const ticket = t0
    ? `<div class="card ticket"><b>A ticket to answer</b> (${esc(t0.at.slice(11, 19))} UTC): “Hi, my child ${esc(t0.studentName)} at ${esc(t0.school)} says the grade for <i>${esc(t0.assignmentTitle)}</i> never showed up in ${esc(district?.info.name ?? t0.tenant)}'s parent portal. Did you send it?”<br>
<span class="muted">Search the dashboard for the student <code>${esc(t0.studentId)}</code> or the event <code>${esc(t0.eventId)}</code>: did it reach the district, when, and what did the district answer?</span></div>`
    : "";
  return `${ticket}<h2>Traffic</h2>
<p>${t.published} events published this run (run id <code>${esc(t.runId)}</code>) · ${t.paused ? '<span class="state-broken">paused</span>' : `about ${t.eventsPerSecond} per second`}${t.errors ? ` · <span class="state-broken">${t.errors} publish errors: ${esc(t.lastError ?? "")}</span>` : ""}</p>
<div class="row">
<form method="post" action="/api/traffic"><input type="hidden" name="paused" value="${!t.paused}"><button type="submit">${t.paused ? "Resume traffic" : "Pause traffic"}</button></form>
${[1, 4, 20].map((n) => `<form method="post" action="/api/traffic"><input type="hidden" name="eventsPerSecond" value="${n}"><button type="submit">${n}/s</button></form>`).join("")}
</div>
<h2>Simulated districts</h2>
<table><thead><tr><th>district</th><th>behaviour now</th><th>switch</th><th>requests</th><th>applied</th><th>redeliveries recognised</th><th>applied twice</th><th>answers</th></tr></thead><tbody>${rows}</tbody></table>
<h2>Recently published events</h2>
<p class="muted">Paste an event id, student id or assignment id into the dashboard's search to answer "did this grade reach the district?".</p>
<table><thead><tr><th>time (UTC)</th><th>event id</th><th>type</th><th>district</th><th>student</th><th>assignment</th><th></th></tr></thead><tbody>${recent || '<tr><td colspan="7" class="muted">nothing yet</td></tr>'}</tbody></table>`;
}

const code = (v: string | undefined) => (v ? `<code>${esc(v)}</code>` : "");

function renderControlPage(ctx: ControlContext): string {
  const dash = ctx.dashboardUrl.replace(/\/$/, "");
  // The password stays out of the page: the terminal that started the demo printed it, and the data directory keeps it.
  const signIn = ctx.signIn
    ? `Sign in as <code>${esc(ctx.signIn.email)}</code>${ctx.signIn.password ? " with the password the demo printed at start (also in <code>.data/demo/admin-password</code>, or <code>$HOOKLEDGER_DATA_DIR/demo/admin-password</code>)" : ""}.`
    : "";
  return `<!doctype html><html><head><meta charset="utf-8"><title>hookledger demo: simulated districts</title><style>${PAGE_CSS}
.row{display:flex;gap:6px;flex-wrap:wrap}.ticket{max-width:none;background:#fffbeb;border-color:#fcd34d;margin:12px 0}.row form{margin:0}ol li{margin:2px 0}</style></head><body>
<h1>hookledger demo: simulated districts</h1>
<p>Dashboard: <a href="${esc(dash)}">${esc(dash)}</a> · <a href="${esc(dash)}/dlq">dead-letter queue</a> · <a href="${esc(dash)}/subscriptions">subscriptions</a> · <a href="${esc(dash)}/dlq/redrive">redrive</a>. ${signIn}</p>
<ol>
<li>Watch the dashboard fill up: deliveries retrying (Jefferson, Riverside, Cedar Falls, Oak Ridge), dead-lettered (Maple Grove's 422s, Westfield's 410, Jefferson's exhausted retries), and a disabled subscription (Westfield).</li>
<li>Answer a ticket: search the dashboard for a student or event id from the table at the bottom.</li>
<li>Flip a district's switch below (say, Maple Grove: "Accept a missing term_id"), then redrive its dead letters from the dashboard and watch the DLQ drain.</li>
<li>Check each district's "applied twice" column: a receiver that keys on <code>webhook-id</code> never applies a retry twice; the legacy PHP handler, which ignores it, does.</li>
</ol>
<p class="muted">Oak Ridge verifies signatures with ${esc(ctx.signatureLibrary)}. JSON: <a href="/api/state">/api/state</a>; switches: <code>POST /api/districts/&lt;slug&gt;/fix</code> with <code>{"fixed": true|false}</code>.</p>
<div id="live">${renderLive(ctx)}</div>
<script>
setInterval(async () => {
  if (document.hidden) return;
  try { const r = await fetch("/fragment", { cache: "no-store" }); if (r.ok) document.getElementById("live").innerHTML = await r.text(); } catch {}
}, 2000);
</script>
</body></html>`;
}

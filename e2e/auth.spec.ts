import { expect, test } from "@playwright/test";
import fs from "node:fs";
import http from "node:http";
import { api, csrfHeader, signIn, tokenFor, userFor } from "./helpers";

// Each new role's user is created through the real CLI (a few seconds on a busy box).
test.describe.configure({ timeout: 150_000 });

test("an unauthenticated visit redirects to the sign-in page", async ({ page }) => {
  await page.goto("/subscriptions");
  await expect(page).toHaveURL(/\/signin\?next=%2Fsubscriptions$/);
  await expect(page.getByRole("heading", { name: "Sign in to hookledger" })).toBeVisible();
  await expect(page.getByLabel("Email")).toBeVisible();
});

test("the API without credentials answers 401, and security headers are set", async ({ request }) => {
  const r = await request.get("/api/v1/subscriptions");
  expect(r.status()).toBe(401);
  const page = await request.get("/signin");
  const h = page.headers();
  expect(h["content-security-policy"]).toContain("frame-ancestors 'none'");
  expect(h["x-content-type-options"]).toBe("nosniff");
  expect(h["referrer-policy"]).toBe("same-origin");
});

test("a wrong password shows a clear message and stays on the sign-in page", async ({ page }) => {
  await page.goto("/signin");
  await page.getByLabel("Email").fill("nobody@example.test");
  await page.getByLabel("Password").fill("not the password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "do not match" })).toBeVisible();
  await expect(page).toHaveURL(/\/signin/);
});

test("a support user sees no pause/redrive controls, and the API refuses the same actions with 403 through the session", async ({ page, request }) => {
  const created = await api(request, "POST", "/api/v1/subscriptions", {
    name: `Auth district ${Date.now()}`,
    url: "http://127.0.0.1:9/webhooks",
    eventTypes: ["assignment.graded"],
    tenant: "auth-e2e",
  });
  expect(created.status).toBe(201);
  const id = created.json.id as string;

  await signIn(page, "support", { next: "/subscriptions" });
  await expect(page).toHaveURL(/\/subscriptions$/);
  await expect(page.getByText(id)).toBeVisible();
  await page.goto(`/subscriptions/${id}`);
  for (const name of [/pause/i, /resume/i, /redrive/i, /rotate/i]) await expect(page.getByRole("button", { name })).toHaveCount(0);

  // The same session, with a valid CSRF header: the server still refuses, by role.
  const headers = { "content-type": "application/json", ...(await csrfHeader(page)) };
  const pause = await page.request.patch(`/api/v1/subscriptions/${id}`, { headers, data: { state: "paused", reason: "e2e" } });
  expect(pause.status()).toBe(403);
  expect((await pause.json()).error.message).toContain("The support role may not change subscriptions; that takes the manager, engineer or admin role.");
  const read = await page.request.get(`/api/v1/subscriptions/${id}`);
  expect(read.status()).toBe(200);
  expect(JSON.stringify(await read.json())).not.toContain("whsec_");
});

test("a manager's session mutation needs the CSRF header: without it 403, with it 200", async ({ page }) => {
  const created = await api(page.request, "POST", "/api/v1/subscriptions", {
    name: `CSRF district ${Date.now()}`,
    url: "http://127.0.0.1:9/webhooks",
    eventTypes: ["assignment.graded"],
    tenant: "csrf-e2e",
  });
  const id = created.json.id as string;
  await signIn(page, "manager");
  const bare = await page.request.patch(`/api/v1/subscriptions/${id}`, { headers: { "content-type": "application/json" }, data: { state: "paused" } });
  expect(bare.status()).toBe(403);
  const ok = await page.request.patch(`/api/v1/subscriptions/${id}`, {
    headers: { "content-type": "application/json", ...(await csrfHeader(page)) },
    data: { state: "paused", reason: "maintenance" },
  });
  expect(ok.status(), await ok.text()).toBe(200);
});

test("signing out ends the session", async ({ page }) => {
  await signIn(page, "engineer");
  const res = await page.request.post("/api/auth/signout", { headers: await csrfHeader(page) });
  expect(res.status()).toBe(200);
  await page.goto("/");
  await expect(page).toHaveURL(/\/signin/);
});

test("an admin adds a user on /admin/users and gets a one-time password; a support user gets the 403 page there", async ({ page, browser }) => {
  await signIn(page, "admin", { next: "/admin/users" });
  await expect(page.getByRole("heading", { name: "Users" })).toBeVisible();
  const email = `added-${Date.now()}@example.test`;
  await page.getByLabel("Email").fill(email);
  await page.getByRole("button", { name: "Create user" }).click();
  await expect(page.getByRole("status")).toContainText(`One-time password for ${email}`);
  await expect(page.getByRole("cell", { name: email })).toBeVisible();

  const other = await browser.newPage();
  await signIn(other, "support");
  await other.goto("/admin/users");
  // forbidden(): the dashboard's own refused page, inside its frame, saying why and whom to ask (the status is 200
  // once the dashboard layout has started streaming).
  await expect(other.getByRole("heading", { name: "Not allowed for your account" })).toBeVisible();
  await expect(other.getByTestId("refused-reason")).toContainText("ask an admin");
  await expect(other.getByRole("button", { name: "Create user" })).toHaveCount(0);
  await other.close();
});

test("the sign-in form's 303 never leaves the site, whatever `next` says", async ({ request, baseURL }) => {
  const user = await userFor("support");
  const site = new URL(baseURL!).origin;
  const hostile = [
    "/\t/evil.example",
    "/\n/evil.example",
    "//evil.example",
    "/\\evil.example",
    "https://evil.example/",
    "javascript:alert(1)",
    "/%2F%2Fevil.example",
    "/..//evil.example",
  ];
  for (const next of hostile) {
    const r = await request.post("/api/auth/signin", {
      form: { email: user.email, password: user.password, next },
      headers: { origin: site },
      maxRedirects: 0,
    });
    expect(r.status(), JSON.stringify(next)).toBe(303);
    const location = r.headers()["location"];
    expect(new URL(location, `${site}/signin`).origin, `${JSON.stringify(next)} -> ${location}`).toBe(site);
  }
  // The sign-in page's own redirect for a signed-in viewer stays on the site too.
  const page = await request.get(`/signin?next=${encodeURIComponent("/\t/evil.example")}`, { maxRedirects: 0 });
  const loc = page.headers()["location"];
  if (loc) expect(new URL(loc, `${site}/signin`).origin).toBe(site);
});

/** The pid of the process listening on `port` (the dashboard's `next start`), from /proc. */
function listenerPid(port: number): number {
  const inodes = new Set<string>();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    if (!fs.existsSync(file)) continue;
    for (const line of fs.readFileSync(file, "utf8").trim().split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols[3] === "0A" && parseInt(cols[1].split(":")[1], 16) === port) inodes.add(cols[9]);
    }
  }
  for (const pid of fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
        const m = fs.readlinkSync(`/proc/${pid}/fd/${fd}`).match(/^socket:\[(\d+)\]$/);
        if (m && inodes.has(m[1])) return Number(pid);
      }
    } catch {
      /* another user's process, or gone */
    }
  }
  throw new Error(`no process listens on port ${port}`);
}

function rssBytes(pid: number): number {
  const m = fs.readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+) kB/);
  return Number(m![1]) * 1024;
}

/** POSTs `total` bytes with Transfer-Encoding: chunked (no Content-Length); resolves with the status once the server answers. */
function postChunked(url: URL, total: number, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", headers: { ...headers, "transfer-encoding": "chunked" } });
    let answered = false;
    req.on("response", (res) => {
      answered = true;
      res.resume();
      resolve(res.statusCode ?? 0);
      req.destroy();
    });
    req.on("error", (err) => (answered ? undefined : reject(err)));
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const write = () => {
      while (!answered && sent < total) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", write);
      }
      if (!answered) req.end();
    };
    write();
  });
}

test("a 40 MB chunked body is answered 413 while the dashboard's memory stays bounded", async ({ request, baseURL }) => {
  const site = new URL(baseURL!);
  const pid = listenerPid(Number(site.port));
  const token = await tokenFor("producer");
  const eventHeaders = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const signInHeaders = { "content-type": "application/json", origin: site.origin };
  // Warm both routes up, so their first compilation is not counted as growth.
  expect((await request.post("/api/v1/events", { headers: eventHeaders, data: "{}" })).status()).toBe(400);
  expect((await request.post("/api/auth/signin", { headers: signInHeaders, data: "{}" })).status()).toBe(400);
  // The server stops reading at its limit and answers, and the client then stops sending, so what the server holds does
  // not depend on how large the body would have been; a server that buffered four 40 MB bodies would hold 160 MB (and as
  // much again as strings). The bound leaves room for what the process's heap and allocator do meanwhile (up to 26 MB
  // has been seen with 10 MB bodies), which does not grow with the body.
  const FORTY_MB = 40 * 1024 * 1024;
  for (const [path, headers] of [
    ["/api/v1/events", eventHeaders],
    ["/api/auth/signin", signInHeaders],
  ] as const) {
    const before = rssBytes(pid);
    const statuses = await Promise.all(Array.from({ length: 4 }, () => postChunked(new URL(path, site), FORTY_MB, headers)));
    const grown = rssBytes(pid) - before;
    expect(statuses, path).toEqual([413, 413, 413, 413]);
    expect(grown, `${path}: RSS grew by ${(grown / 1048576).toFixed(1)} MB`).toBeLessThan(64 * 1024 * 1024);
  }
});

test("a chunked body over the limit is answered 413 before it ends", async ({ baseURL }) => {
  const site = new URL(baseURL!);
  const token = await tokenFor("producer");
  // Two megabytes (far over the route's limit), then the client waits: a server that read the whole body before judging its size
  // would never answer.
  const status = await new Promise<number>((resolve, reject) => {
    const req = http.request(new URL("/api/v1/events", site), {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "transfer-encoding": "chunked" },
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error("no answer within 10 s while the body was still open"));
    }, 10_000);
    req.on("response", (res) => {
      clearTimeout(timer);
      res.resume();
      resolve(res.statusCode ?? 0);
      req.destroy();
    });
    req.on("error", (err) => (req.destroyed ? undefined : reject(err)));
    req.write(Buffer.alloc(2 * 1024 * 1024, 0x20));
  });
  expect(status).toBe(413);
});

test("a session cookie copied before sign-out is refused after it", async ({ page, playwright, baseURL }) => {
  await signIn(page, "manager");
  const jar = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join("; ");
  const thief = await playwright.request.newContext({ baseURL, extraHTTPHeaders: { cookie: jar } });
  expect((await thief.get("/api/auth/session")).status()).toBe(200);
  expect((await page.request.post("/api/auth/signout", { headers: await csrfHeader(page) })).status()).toBe(200);
  expect((await thief.get("/api/auth/session")).status()).toBe(401);
  expect((await thief.get("/api/v1/subscriptions")).status()).toBe(401);
  await thief.dispose();
});

test("CSP: script-src has a nonce and no 'unsafe-inline'; HSTS only over https", async ({ request }) => {
  const page = await request.get("/signin");
  const csp = page.headers()["content-security-policy"];
  const scriptSrc = csp
    .split(";")
    .map((d) => d.trim())
    .find((d) => d.startsWith("script-src"))!;
  expect(scriptSrc).toMatch(/'nonce-[A-Za-z0-9+/=]+'/);
  expect(scriptSrc).not.toContain("unsafe-inline");
  expect(page.headers()["strict-transport-security"]).toBeUndefined();
  const tls = await request.get("/signin", { headers: { "x-forwarded-proto": "https" } });
  expect(tls.headers()["strict-transport-security"]).toBe("max-age=31536000");
  // The nonce in the header is the one on the page's scripts, and it changes per request.
  const html = await page.text();
  const nonce = scriptSrc.match(/'nonce-([^']+)'/)![1];
  expect(html).toContain(`nonce="${nonce}"`);
  expect((await request.get("/signin")).headers()["content-security-policy"]).not.toBe(csp);
});

test("every dashboard page renders and runs its scripts without a CSP violation", async ({ page }) => {
  const violations: string[] = [];
  page.on("console", (m) => {
    if (/Content Security Policy|Refused to (execute|load|apply)/i.test(m.text())) violations.push(`${page.url()}: ${m.text()}`);
  });
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) => console.error(`Content Security Policy violation: ${e.violatedDirective} ${e.blockedURI}`));
  });
  await signIn(page, "admin");
  for (const path of ["/", "/subscriptions", "/dlq", "/dlq/redrive", "/redrives", "/alerts", "/audit", "/admin/users", "/admin/tokens", "/password"]) {
    const res = await page.goto(path);
    expect(res?.status(), path).toBeLessThan(400);
    // Hydrated: client components answer (the header's sign-out button is rendered by React on every dashboard page).
    await page.waitForLoadState("networkidle");
    expect(await page.evaluate(() => typeof (window as unknown as { __next_f?: unknown }).__next_f), path).not.toBe("undefined");
  }
  expect(violations).toEqual([]);
});

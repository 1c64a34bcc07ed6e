import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { randomBytes } from "node:crypto";
import { expect, type APIRequestContext, type Cookie, type Locator, type Page } from "@playwright/test";
import { E2E_DATA_DIR } from "../playwright.config";

type Role = "admin" | "producer" | "support" | "manager" | "engineer";
const tokens = new Map<string, string>();

/**
 * Runs the real CLI against the e2e database. Asynchronously on purpose: a
 * synchronous child process (seconds) froze this process's event loop, so the
 * dashboard's close of an idle kept-alive connection went unnoticed and the
 * next API request was written to a dead socket (CI: a failed fetch).
 */
export async function cli(args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, ["bin/hookledger.mjs", ...args], {
    env: { ...process.env, HOOKLEDGER_DATA_DIR: E2E_DATA_DIR, DATABASE_URL: "" },
    encoding: "utf8",
  });
  return stdout;
}

/** An API token for a role, created through the real CLI against the e2e database. */
export async function tokenFor(role: Role): Promise<string> {
  const cached = tokens.get(role);
  if (cached) return cached;
  const token = (await cli(["token", "create", "--role", role, "--name", `e2e-${role}`])).trim().split("\n").pop()!;
  tokens.set(role, token);
  return token;
}

/**
 * Event types every spec publishes. A subscription for every district (no tenant) to one of them would catch every later
 * spec's events on the shared e2e server: one spec's 1,200 events became 11,000 deliveries to nine dead endpoints from
 * earlier specs, and the worker's retries of them took half a core for the rest of the run. Such a subscription takes
 * a type of its spec's own (`focus.graded_${run}`); a district's (with a tenant) only ever gets its district's events.
 */
export const SHARED_TYPES = ["assignment.graded", "*"];

export async function api(request: APIRequestContext, method: "GET" | "POST" | "PATCH", path: string, body?: unknown, role: Role = "admin") {
  if (method === "POST" && path.split("?")[0] === "/api/v1/subscriptions") {
    const b = body as { tenant?: unknown; eventTypes?: unknown };
    const shared = Array.isArray(b?.eventTypes) ? b.eventTypes.filter((t) => SHARED_TYPES.includes(String(t))) : [];
    if (!b?.tenant && shared.length > 0)
      throw new Error(`A subscription for every district to ${shared.join(", ")} catches other specs' events: give it a type of this spec's own, or a tenant.`);
  }
  const token = await tokenFor(role);
  const res = await request.fetch(path, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    data: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status(), json: await res.json().catch(() => null) };
}

export type E2EUser = { email: string; password: string; role: Exclude<Role, "producer"> };
const users = new Map<string, E2EUser>();

/** A dashboard user of a role (one per role per run), created through the real CLI (`hookledger user create`). */
export async function userFor(role: E2EUser["role"]): Promise<E2EUser> {
  const cached = users.get(role);
  if (cached) return cached;
  const email = `e2e-${role}-${randomBytes(3).toString("hex")}@example.test`;
  const password = (await cli(["user", "create", "--email", email, "--role", role])).trim().split("\n").pop()!;
  const u = { email, password, role };
  users.set(role, u);
  return u;
}

/** Each role's session cookies from its last sign-in through the form, reused by later `signIn`s of the run. */
const sessions = new Map<string, Cookie[]>();

/**
 * Signs `page` in as a user of `role` and opens `next` (default the dashboard's home). The page's context then carries
 * the session cookie and the readable hl_csrf cookie (so `page.request` calls are authenticated as that user).
 *
 * The first time for a role it signs in through the form; later it gives the context that session's cookies, as
 * Playwright's own guide does (authenticate once, reuse the state): a sign-in verifies the password on purpose slowly,
 * about a second of the server's CPU each, and most specs sign in only to reach a page. A session some test has ended
 * since (signed out, replaced) is refused by /api/auth/session; then it signs in through the form again. Specs with
 * accounts of their own use `signInWith`, which always fills the form.
 */
export async function signIn(page: Page, role: E2EUser["role"] = "admin", opts: { next?: string } = {}): Promise<E2EUser> {
  const user = await userFor(role);
  const kept = sessions.get(role);
  if (kept) {
    await page.context().addCookies(kept);
    // Asked of the API, not read from the page: a page streams before it finds the session ended, and only then
    // moves to the sign-in page.
    if ((await page.request.get("/api/auth/session")).ok()) {
      await page.goto(opts.next ?? "/");
      return user;
    }
    sessions.delete(role);
    await page.context().clearCookies();
  }
  await signInWith(page, user, opts);
  sessions.set(
    role,
    (await page.context().cookies()).filter((c) => c.name === "hl_session" || c.name === "hl_csrf"),
  );
  return user;
}

/**
 * Signs `page` in with an account's email and password through the sign-in form, and replaces a one-time password
 * (the CLI's, which the dashboard asks to replace on /password) with a fresh one, written back to `account`.
 */
export async function signInWith(page: Page, account: { email: string; password: string }, opts: { next?: string } = {}): Promise<void> {
  await page.goto(opts.next ? `/signin?next=${encodeURIComponent(opts.next)}` : "/signin");
  await page.getByLabel("Email").fill(account.email);
  await page.getByLabel("Password").fill(account.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).not.toHaveURL(/\/signin/);
  if (/\/password(\?|$)/.test(new URL(page.url()).pathname + new URL(page.url()).search)) {
    const fresh = `e2e-own-${randomBytes(9).toString("base64url")}`;
    await page.getByLabel("Current password").fill(account.password);
    await page.getByLabel("New password", { exact: true }).fill(fresh);
    await page.getByLabel("New password again").fill(fresh);
    await page.getByRole("button", { name: "Change password" }).click();
    await expect(page).not.toHaveURL(/\/password/);
    account.password = fresh;
  }
}

/** The CSRF header a same-origin mutation needs when calling the API through the page's session (page.request). */
export async function csrfHeader(page: Page): Promise<Record<string, string>> {
  const c = (await page.context().cookies()).find((k) => k.name === "hl_csrf");
  return c ? { "x-hookledger-csrf": decodeURIComponent(c.value) } : {};
}

/**
 * The delivery a publish answer made for one subscription. An event fans out to
 * every matching subscription (others created by earlier specs may match too),
 * so never take deliveries[0].
 */
export function deliveryFor(published: { json: { deliveries: { id: string; subscriptionId: string }[] } }, subscriptionId: string): string {
  const d = published.json.deliveries.find((x) => x.subscriptionId === subscriptionId);
  if (!d) throw new Error(`The event made no delivery for ${subscriptionId}: ${JSON.stringify(published.json.deliveries)}`);
  return d.id;
}

/** A self-signed P-256 certificate and its key, made by openssl in a directory removed before this returns. */
export function selfSignedCert(subject: string, subjectAltName?: string): { key: string; cert: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hl-e2e-cert-"));
  try {
    const args = [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-keyout",
      "key.pem",
      "-out",
      "cert.pem",
      "-days",
      "2",
      "-subj",
      subject,
    ];
    if (subjectAltName) args.push("-addext", `subjectAltName=${subjectAltName}`);
    execFileSync("openssl", args, { cwd: dir, stdio: "ignore" });
    return { key: fs.readFileSync(path.join(dir, "key.pem"), "utf8"), cert: fs.readFileSync(path.join(dir, "cert.pem"), "utf8") };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Waits for the page to be revealed: a dashboard page streams, and sits hidden behind the loading shell until it is.
 * Its rows are in the DOM before then (an assertion on text alone can pass on the hidden copy), its links and buttons
 * not yet reachable by role (a count of them is 0).
 */
export async function revealed(page: Page): Promise<void> {
  await expect(page.getByRole("status", { name: "Loading", exact: true })).toHaveCount(0);
}

/**
 * One page turn: clicks the pager's Next or Previous (a link or a button; the pager is the page's one navigation
 * named "… pages") and waits for the other page: the URL changed, `rows` (a text for each row that tells them apart)
 * are others, and the page is revealed.
 */
export async function turnPage(page: Page, which: "Next" | "Previous", rows: Locator): Promise<void> {
  await revealed(page);
  const pager = page.getByRole("navigation", { name: /\bpages$/i });
  const name = new RegExp(`\\b${which}\\b`);
  const url = page.url();
  const before = (await rows.allInnerTexts()).join("\n");
  await pager.getByRole("link", { name }).or(pager.getByRole("button", { name })).click();
  await expect.poll(() => page.url(), { message: `the URL after ${which}` }).not.toBe(url);
  // Until the new page arrives the loading shell may stand in for the rows (none at all): another page's rows, not just no rows.
  await expect.poll(async () => ((await rows.allInnerTexts()).join("\n") || before) !== before, { message: `other rows after ${which}` }).toBe(true);
  await revealed(page);
}

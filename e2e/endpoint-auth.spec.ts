// A manager adds a bearer header to a subscription whose gateway wants one,
// sends a test from the subscription page and sees the gateway's 200; before
// the header the same test shows its 401. Screens at 1,280 and 390 px. A
// district whose endpoint has a self-signed certificate is trusted with a CA
// bundle alone (no client certificate).
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { api, selfSignedCert, signIn } from "./helpers";
import { shot } from "./dashboard-seed";

test.setTimeout(180_000);

const TOKEN = `e2e-${randomBytes(9).toString("hex")}`;
let server: http.Server;
let url: string;
const seen: http.IncomingHttpHeaders[] = [];

test.beforeAll(async () => {
  // A district gateway: 200 with the right bearer token, 401 otherwise.
  server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      seen.push(req.headers);
      const ok = req.headers.authorization === `Bearer ${TOKEN}`;
      res.writeHead(ok ? 200 : 401, { "content-type": "application/json", "x-gateway": "lincoln-gw" });
      res.end(JSON.stringify(ok ? { accepted: true } : { error: "missing or wrong bearer token" }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
});
test.afterAll(async () => new Promise<void>((resolve) => server.close(() => resolve())));

test("manager adds a bearer header, sends a test and sees 200", async ({ page, request }) => {
  const run = Date.now().toString(36);
  const name = `Lincoln gateway ${run}`;
  const sub = await api(request, "POST", "/api/v1/subscriptions", { id: `sub_gw_${run}`, name, url, eventTypes: [`gateway.graded_${run}`] });
  expect(sub.status).toBe(201);

  await signIn(page, "manager");
  await page.goto(`/subscriptions/${sub.json.id}`);
  await expect(page.getByRole("heading", { name })).toBeVisible();

  // Without the header the gateway refuses: the test shows its 401 and its answer.
  const tests = page.getByRole("region", { name: "Test sends" });
  await tests.getByRole("button", { name: "Send test" }).click();
  const result = tests.getByTestId("test-send-result");
  await expect(result).toContainText("HTTP 401");
  await expect(result).toContainText("missing or wrong bearer token");

  const auth = page.getByRole("region", { name: "Endpoint authentication" });
  await auth.getByRole("button", { name: "Add headers…" }).click();
  const form = auth.getByRole("form", { name: "Endpoint headers" });
  await expect(form.getByLabel("Header name")).toHaveValue("Authorization");
  await form.getByLabel("Value").fill(`Bearer ${TOKEN}`);
  await form.getByRole("button", { name: "Save headers" }).click();
  await expect(auth.getByTestId("endpoint-headers")).toContainText("Authorization:");
  await expect(auth.getByTestId("endpoint-headers")).toContainText("Bearer ••••");
  await expect(page.locator("body")).not.toContainText(TOKEN);

  await tests.getByRole("button", { name: "Send test" }).click();
  await expect(result).toContainText("HTTP 200");
  await expect(result).toContainText('{"accepted":true}');
  await expect(tests.getByTestId("test-sends-list").locator("li")).toHaveCount(2);
  expect(seen.at(-1)!.authorization).toBe(`Bearer ${TOKEN}`);
  expect(seen.at(-1)!["hookledger-test"]).toBe("1");

  await auth.scrollIntoViewIfNeeded();
  await page.setViewportSize({ width: 1280, height: 900 });
  await shot(page, "endpoint-auth-1280");
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, "endpoint-auth-390");
  await expect(page.locator("body")).not.toContainText(TOKEN);
});

test("manager trusts a district's self-signed certificate with a CA bundle alone, and the test send then gets 200", async ({ page, request }) => {
  // A district endpoint on HTTPS with a certificate no public CA signed, asking for no client certificate.
  const { key, cert } = selfSignedCert("/CN=127.0.0.1", "IP:127.0.0.1");
  const tlsServer = https.createServer({ key, cert }, (req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end('{"accepted":"over tls"}'));
  });
  await new Promise<void>((resolve) => tlsServer.listen(0, "127.0.0.1", resolve));
  try {
    const run = Date.now().toString(36);
    const name = `Cedar Falls private CA ${run}`;
    const tlsUrl = `https://127.0.0.1:${(tlsServer.address() as AddressInfo).port}/webhooks`;
    const sub = await api(request, "POST", "/api/v1/subscriptions", { id: `sub_ca_${run}`, name, url: tlsUrl, eventTypes: [`gateway.graded_${run}`] });
    expect(sub.status).toBe(201);

    await signIn(page, "manager");
    await page.goto(`/subscriptions/${sub.json.id}`);
    const tests = page.getByRole("region", { name: "Test sends" });
    const result = tests.getByTestId("test-send-result");
    // Not trusted yet: the test send names the certificate problem.
    await tests.getByRole("button", { name: "Send test" }).click();
    await expect(result).toContainText(/self[- ]signed|certificate/i);

    const auth = page.getByRole("region", { name: "Endpoint authentication" });
    await auth.getByRole("button", { name: "Add certificate…" }).click();
    const form = auth.getByRole("form", { name: "Client certificate" });
    await form.getByLabel(/CA bundle to trust/).fill(cert);
    await form.getByRole("button", { name: "Save certificate" }).click();
    await expect(auth.getByTestId("endpoint-tls")).toHaveText("No client certificate; trusts its own CA bundle.");

    await tests.getByRole("button", { name: "Send test" }).click();
    await expect(result).toContainText("HTTP 200");
    await expect(result).toContainText('{"accepted":"over tls"}');
    await auth.scrollIntoViewIfNeeded();
    await shot(page, "endpoint-auth-ca-only");
  } finally {
    tlsServer.closeAllConnections();
    await new Promise((resolve) => tlsServer.close(resolve));
  }
});

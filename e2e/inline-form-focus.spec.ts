// The subscription page's inline forms by keyboard alone: a button opens a form in place, focus moves into it, and
// its Save (or Cancel) closes it with a polite status saying what was saved and focus back on the button that opened
// it, not at the top of the page.
import { expect, test, type Page } from "@playwright/test";
import { api, selfSignedCert, signIn } from "./helpers";
import { shot } from "./dashboard-seed";

const run = Date.now().toString(36);

async function newSubscription(page: Page, request: Parameters<typeof api>[0], tag: string) {
  const id = `sub_inline_${tag}_${run}`;
  const created = await api(request, "POST", "/api/v1/subscriptions", {
    id,
    name: `Inline ${tag} ${run}`,
    url: "https://inline.k12.example/hooks",
    eventTypes: [`inline.graded_${run}`],
  });
  expect(created.status).toBe(201);
  await signIn(page, "admin");
  await page.goto(`/subscriptions/${id}`);
  return id;
}

test("saving the configuration says what was saved and gives focus back to Edit", async ({ page, request }) => {
  await newSubscription(page, request, "config");
  const card = page.getByRole("region", { name: "Configuration" });
  const edit = card.getByRole("button", { name: "Edit" });
  await expect(edit).toBeEnabled();
  await edit.focus();
  await page.keyboard.press("Enter");
  const form = card.getByRole("form", { name: "Edit configuration" });
  await expect(form.getByLabel("Name")).toBeFocused();
  await page.keyboard.press("ControlOrMeta+a");
  await page.keyboard.type(`Renamed ${run}`);
  await page.keyboard.press("Enter");
  await expect(form).toBeHidden();
  await expect(card.getByRole("status")).toHaveText("Saved: name.");
  // Still so once the page has read the subscription back and shows the new name.
  await expect(card.getByText(`Renamed ${run}`)).toBeVisible();
  await expect(card.getByRole("status")).toHaveText("Saved: name.");
  await expect(edit).toBeFocused();
  await shot(page, "inline-form-config-saved");

  // Cancel gives focus back too, and says nothing was saved by saying nothing.
  await page.keyboard.press("Enter");
  await expect(form).toBeVisible();
  await expect(card.getByRole("status")).toHaveText("");
  await form.getByRole("button", { name: "Cancel" }).click();
  await expect(edit).toBeFocused();
});

test("saving or removing endpoint headers, or a CA bundle, says so and gives focus back to the button", async ({ page, request }) => {
  await newSubscription(page, request, "auth");
  const auth = page.getByRole("region", { name: "Endpoint authentication" });
  const status = auth.getByRole("status");

  const addHeaders = auth.getByRole("button", { name: /^(Add|Replace) headers…$/ });
  await expect(addHeaders).toBeEnabled();
  await addHeaders.focus();
  await page.keyboard.press("Enter");
  const headers = auth.getByRole("form", { name: "Endpoint headers" });
  await expect(headers.getByLabel("Header name")).toBeFocused();
  await headers.getByLabel("Value").fill("Bearer inline-focus");
  await headers.getByLabel("Value").press("Enter");
  await expect(headers).toBeHidden();
  await expect(status).toHaveText("Saved: the endpoint headers.");
  await expect(auth.getByRole("button", { name: "Replace headers…" })).toBeFocused();

  await auth.getByRole("button", { name: "Remove all headers" }).click();
  await expect(status).toHaveText("Removed every endpoint header.");
  await expect(auth.getByRole("button", { name: "Add headers…" })).toBeFocused();

  const { cert } = selfSignedCert("/CN=inline");
  const addCert = auth.getByRole("button", { name: /^(Add|Replace) certificate…$/ });
  await addCert.focus();
  await page.keyboard.press("Enter");
  const tls = auth.getByRole("form", { name: "Client certificate" });
  await expect(tls.getByLabel(/Client certificate \(PEM/)).toBeFocused();
  await tls.getByLabel(/CA bundle to trust/).fill(cert);
  await tls.getByRole("button", { name: "Save certificate" }).click();
  await expect(tls).toBeHidden();
  await expect(status).toHaveText("Saved: the certificate and CA settings.");
  await expect(auth.getByRole("button", { name: "Replace certificate…" })).toBeFocused();
  await shot(page, "inline-form-auth-saved");
});

// The dashboard's modal dialogs by keyboard alone: opened from a button, focus is in the dialog; Tab and Shift+Tab
// go round its own controls and never onto the page behind it; Escape closes it and focus is back on the button
// that opened it. And while one is open the page behind it is not there for a screen reader, a script or a key.
import { expect, test, type Page } from "@playwright/test";
import { api, signIn } from "./helpers";

const run = Date.now().toString(36);

/** Whether the focused element is inside the open dialog. */
const focusInDialog = (page: Page) => page.evaluate(() => Boolean(document.activeElement?.closest("dialog[open]")));

/**
 * Tab past the dialog's last control leaves the page for the browser's own toolbar (as the browser's modal dialog
 * does, so a keyboard user can still reach the address bar; the page reports its body as focused), and the next Tab
 * is back on the first control. What never happens is focus on the page behind the dialog.
 */
async function walksInside(page: Page, key: "Tab" | "Shift+Tab", presses: number) {
  let inside = 0;
  for (let i = 0; i < presses; i++) {
    await page.keyboard.press(key);
    const where = await page.evaluate(() => (document.activeElement?.closest("dialog[open]") ? "dialog" : document.activeElement === document.body ? "toolbar" : "page"));
    expect(where, `${key} ×${i + 1} reached the page behind the dialog`).not.toBe("page");
    if (where === "dialog") inside++;
  }
  // Round and round, not stuck outside after the first lap.
  expect(inside).toBeGreaterThan(presses / 2);
}

test("the New subscription dialog keeps focus inside and gives it back on Escape", async ({ page }) => {
  await signIn(page, "admin");
  await page.goto("/subscriptions");
  const opener = page.getByRole("button", { name: "New subscription" });
  await expect(opener).toBeEnabled();
  await opener.focus();
  await page.keyboard.press("Enter");
  const dialog = page.getByRole("dialog", { name: "New subscription" });
  await expect(dialog).toBeVisible();
  await expect(dialog.getByLabel("Name")).toBeFocused();
  // More presses than the dialog has controls: past the last one, Tab comes back to the first.
  await walksInside(page, "Tab", 40);
  await walksInside(page, "Shift+Tab", 40);
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();
  await expect(opener).toBeFocused();
});

test("a reason dialog (archive) keeps focus inside and gives it back on Escape", async ({ page, request }) => {
  const id = `sub_focus_${run}`;
  expect(
    (await api(request, "POST", "/api/v1/subscriptions", { id, name: `Focus ${run}`, url: "https://focus.k12.example/hooks", eventTypes: [`focus.graded_${run}`] }))
      .status,
  ).toBe(201);
  await signIn(page, "admin");
  await page.goto(`/subscriptions/${id}`);
  const opener = page.getByRole("button", { name: "Archive…" });
  await expect(opener).toBeEnabled();
  await opener.focus();
  await page.keyboard.press("Enter");
  const dialog = page.getByRole("dialog");
  await expect(dialog).toBeVisible();
  expect(await focusInDialog(page)).toBe(true);
  await walksInside(page, "Tab", 12);
  await walksInside(page, "Shift+Tab", 12);
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();
  await expect(opener).toBeFocused();
});

test("once a subscription is created, Escape does not close the one-time secret; focus is on its copy button", async ({ page }) => {
  await signIn(page, "admin");
  await page.goto("/subscriptions");
  const opener = page.getByRole("button", { name: "New subscription" });
  await expect(opener).toBeEnabled();
  await opener.click();
  const dialog = page.getByRole("dialog");
  await dialog.getByLabel("Name").fill(`Secret kb ${run}`);
  await dialog.getByLabel("Endpoint URL").fill("https://secretkb.k12.example/hooks");
  await dialog.getByLabel("Other types, not listed above (comma-separated)").fill(`focus.graded_${run}`);
  await dialog.getByLabel("Other types, not listed above (comma-separated)").press("Enter");
  const secret = dialog.getByTestId("secret-once");
  await expect(secret).toBeVisible();
  await expect(secret.getByRole("button", { name: "Copy secret" })).toBeFocused();
  // More than once: Chromium lets a page refuse only the first Escapes of a row through the dialog's cancel event.
  for (let i = 0; i < 3; i++) await page.keyboard.press("Escape");
  await expect(secret).toBeVisible();
  // Nor does a click beside it (on the backdrop).
  await page.mouse.click(5, 5);
  await expect(secret).toBeVisible();
  await dialog.getByRole("button", { name: "Done" }).click();
  await expect(dialog).toBeHidden();
});

test("while a dialog is open the page behind it is inert: not in the accessibility tree, and nothing there takes focus", async ({ page }) => {
  await signIn(page, "admin");
  await page.goto("/subscriptions");
  const opener = page.getByRole("button", { name: "New subscription" });
  await expect(opener).toBeEnabled();
  // What a screen reader is given (Chromium's accessibility tree): the roles of the nodes of a name, less their text.
  const cdp = await page.context().newCDPSession(page);
  const exposed = async (name: string) => {
    const { nodes } = await cdp.send("Accessibility.getFullAXTree");
    return nodes
      .filter((n) => !n.ignored && n.name?.value === name)
      .map((n) => n.role?.value)
      .filter((role) => role !== "StaticText" && role !== "InlineTextBox");
  };
  expect(await exposed("Sign out")).toEqual(["button"]);
  expect(await exposed("New subscription")).toContain("button");
  await opener.click();
  const dialog = page.getByRole("dialog", { name: "New subscription" });
  await expect(dialog.getByLabel("Name")).toBeFocused();
  // The dialog is there; the page's header, navigation and the button behind it are not (aria-modal alone left them).
  expect(await exposed("New subscription")).toContain("dialog");
  expect(await exposed("New subscription")).not.toContain("button");
  expect(await exposed("Sign out")).toEqual([]);
  expect(await exposed("Dead letters")).toEqual([]);
  // A script of the page behind (a poll's re-render, a field's autoFocus) cannot take focus out of the dialog.
  await page.locator('nav[aria-label="Main"] a[href="/dlq"]').evaluate((a: HTMLElement) => a.focus());
  await expect(dialog.getByLabel("Name")).toBeFocused();
  // A click beside the dialog (on its backdrop) closes it, and the page is back.
  await page.mouse.click(5, 5);
  await expect(dialog).toBeHidden();
  await expect(opener).toBeFocused();
  expect(await exposed("Sign out")).toEqual(["button"]);
});

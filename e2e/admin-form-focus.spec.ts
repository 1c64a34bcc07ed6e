// The admin and notification forms that stay open after a save, by keyboard: pressing the submit button leaves
// focus on it (the request's "busy" no longer disables the focused button, which dropped focus to the top of the
// page) and the answer is a status line, there from the start.
import { expect, test, type Page } from "@playwright/test";
import { signIn } from "./helpers";

const run = Date.now().toString(36);

/**
 * Presses the focused submit button and waits for the form's status to say `saved`. The status line is in the page,
 * empty, before the save: a live region inserted together with its text is not reliably read out by screen readers.
 */
async function submitByKeyboard(page: Page, form: ReturnType<Page["getByRole"]>, button: string, saved: string | RegExp) {
  const submit = form.getByRole("button", { name: button });
  await expect(form.getByRole("status")).toHaveText("");
  await submit.focus();
  await page.keyboard.press("Enter");
  await expect(form.getByRole("status")).toContainText(saved);
  await expect(submit).toBeFocused();
}

test("creating a tenant and saving the default threshold and a district's contacts keep focus on the button pressed", async ({ page }) => {
  await signIn(page, "admin");
  await page.goto("/admin/tenants");
  const create = page.getByRole("form", { name: "Add a tenant" });
  await create.getByRole("textbox", { name: /^Id/ }).fill(`focus_${run}`);
  await create.getByRole("textbox", { name: "Name" }).fill(`Focus District ${run}`);
  await submitByKeyboard(page, create, "Create tenant", `Created Focus District ${run}`);

  await submitByKeyboard(page, page.getByRole("form", { name: "Default dead-letter threshold" }), "Save default", "Saved: districts without their own");

  await page.reload();
  const district = page.getByTestId("tenant-contacts").filter({ hasText: `Focus District ${run}` });
  await district.locator("summary").click();
  const contacts = page.getByRole("form", { name: `Notification contacts of Focus District ${run}` });
  await contacts.getByRole("textbox", { name: /E-mail addresses/ }).fill(`it-${run}@district.example`);
  await submitByKeyboard(page, contacts, "Save contacts", "Saved: 1 address");
});

test("adding a user keeps focus on the button pressed", async ({ page }) => {
  await signIn(page, "admin");
  await page.goto("/admin/users");
  const create = page.getByRole("form", { name: "Add a user" });
  await create.getByRole("textbox").first().fill(`focus-${run}@example.com`);
  const submit = create.getByRole("button", { name: /Create|Add/ });
  await expect(create.getByRole("status")).toHaveText("");
  await submit.focus();
  await page.keyboard.press("Enter");
  await expect(create.getByRole("status")).toContainText(`One-time password for focus-${run}@example.com`);
  await expect(submit).toBeFocused();
});

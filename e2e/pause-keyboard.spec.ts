// Pausing and resuming a subscription by keyboard: the outcome is announced (a status, not only a badge that
// changes colour elsewhere on the page), and focus stays on the button, so the next Tab goes on from there instead
// of from the top of the page.
import { expect, test } from "@playwright/test";
import { api, signIn } from "./helpers";

const run = Date.now().toString(36);

test("pause and resume from the keyboard: announced, and focus stays on the button", async ({ page, request }) => {
  const id = `sub_pausekb_${run}`;
  const made = await api(request, "POST", "/api/v1/subscriptions", {
    id,
    name: `Pause kb ${run}`,
    url: "https://pausekb.k12.example/hooks",
    eventTypes: [`pausekb.graded_${run}`],
  });
  expect(made.status).toBe(201);
  await signIn(page, "manager");
  await page.goto(`/subscriptions/${id}`);
  const pause = page.getByRole("button", { name: "Pause deliveries" });
  await expect(pause).toBeEnabled();
  await pause.focus();
  await page.keyboard.press("Enter");
  await expect(page.getByRole("status").filter({ hasText: /^Paused/ })).toBeVisible();
  const resume = page.getByRole("button", { name: "Resume deliveries" });
  await expect(resume).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.getByRole("status").filter({ hasText: /^Resumed/ })).toBeVisible();
  await expect(page.getByRole("button", { name: "Pause deliveries" })).toBeFocused();
});

// A district (tenant) of its own for a spec, with a manager confined to it, made through the real CLI as an
// operator would (`hookledger tenant create`, `hookledger user create --tenant`).
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { randomBytes } from "node:crypto";
import { expect, type Page } from "@playwright/test";
import { E2E_DATA_DIR } from "../playwright.config";

async function cli(args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, ["bin/hookledger.mjs", ...args], {
    env: { ...process.env, HOOKLEDGER_DATA_DIR: E2E_DATA_DIR, DATABASE_URL: "" },
    encoding: "utf8",
  });
  return stdout;
}

export type District = { id: string; name: string; manager: { email: string; password: string } };

export async function createDistrict(id: string, name: string): Promise<District> {
  await cli(["tenant", "create", "--id", id, "--name", name]);
  const email = `${id}-manager-${randomBytes(3).toString("hex")}@example.test`;
  const password = (await cli(["user", "create", "--email", email, "--role", "manager", "--tenant", id])).trim().split("\n").pop()!;
  return { id, name, manager: { email, password } };
}

/** Signs in as the district's manager through the form (and replaces the one-time password the first time). */
export async function signInAsManager(page: Page, d: District) {
  await page.goto("/signin");
  await page.getByLabel("Email").fill(d.manager.email);
  await page.getByLabel("Password").fill(d.manager.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).not.toHaveURL(/\/signin/);
  if (new URL(page.url()).pathname === "/password") {
    const fresh = `e2e-own-${randomBytes(9).toString("base64url")}`;
    await page.getByLabel("Current password").fill(d.manager.password);
    await page.getByLabel("New password", { exact: true }).fill(fresh);
    await page.getByLabel("New password again").fill(fresh);
    await page.getByRole("button", { name: "Change password" }).click();
    await expect(page).not.toHaveURL(/\/password/);
    d.manager.password = fresh;
  }
}

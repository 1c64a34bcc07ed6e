// A district (tenant) of its own for a spec, with a manager confined to it, made through the real CLI as an
// operator would (`hookledger tenant create`, `hookledger user create --tenant`).
import { randomBytes } from "node:crypto";
import type { Page } from "@playwright/test";
import { cli, signInWith } from "./helpers";

export type District = { id: string; name: string; manager: { email: string; password: string } };

export async function createDistrict(id: string, name: string): Promise<District> {
  await cli(["tenant", "create", "--id", id, "--name", name]);
  const email = `${id}-manager-${randomBytes(3).toString("hex")}@example.test`;
  const password = (await cli(["user", "create", "--email", email, "--role", "manager", "--tenant", id])).trim().split("\n").pop()!;
  return { id, name, manager: { email, password } };
}

/** Signs in as the district's manager through the form (and replaces the one-time password the first time). */
export async function signInAsManager(page: Page, d: District) {
  await signInWith(page, d.manager);
}

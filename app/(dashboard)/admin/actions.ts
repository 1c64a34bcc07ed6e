"use server";
// Admin server actions. Each authorizes on the server (authorizeAction) and the
// use cases in lib/auth/admin.ts check the permission again; Next refuses a
// server action whose Origin does not match the Host (CSRF).
import { revalidatePath } from "next/cache";
import { getPrisma } from "@/lib/db/prisma";
import { AppError } from "@/lib/errors";
import { authorizeAction } from "@/lib/auth/session";
import { createTokenAsAdmin, createUserAsAdmin, revokeToken, setUserDisabled } from "@/lib/auth/admin";

export type ActionResult<T = undefined> = { ok: true; value?: T } | { ok: false; error: string };

async function run<T>(fn: () => Promise<T>): Promise<ActionResult<T>> {
  try {
    return { ok: true, value: await fn() };
  } catch (err) {
    if (err instanceof AppError) return { ok: false, error: err.message };
    throw err;
  }
}

export async function createUserAction(input: { email: string; role: string }): Promise<ActionResult<{ email: string; role: string; password: string }>> {
  return run(async () => {
    const viewer = await authorizeAction("users.manage");
    const u = await createUserAsAdmin(getPrisma(), { email: String(input.email ?? ""), role: String(input.role ?? "") }, viewer);
    revalidatePath("/admin/users");
    return { email: u.email, role: u.role, password: u.password };
  });
}

export async function setUserDisabledAction(id: string, disabled: boolean): Promise<ActionResult> {
  return run(async () => {
    const viewer = await authorizeAction("users.manage");
    await setUserDisabled(getPrisma(), String(id), Boolean(disabled), viewer);
    revalidatePath("/admin/users");
    return undefined;
  });
}

export async function createTokenAction(input: { role: string; name?: string }): Promise<ActionResult<{ name: string; role: string; token: string }>> {
  return run(async () => {
    const viewer = await authorizeAction("tokens.manage");
    const t = await createTokenAsAdmin(getPrisma(), { role: String(input.role ?? ""), name: input.name ? String(input.name) : undefined }, viewer);
    revalidatePath("/admin/tokens");
    return { name: t.name, role: t.role, token: t.token };
  });
}

export async function revokeTokenAction(id: string): Promise<ActionResult> {
  return run(async () => {
    const viewer = await authorizeAction("tokens.manage");
    await revokeToken(getPrisma(), String(id), viewer);
    revalidatePath("/admin/tokens");
    return undefined;
  });
}

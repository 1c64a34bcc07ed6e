"use server";
// Admin server actions. Each authorizes on the server (authorizeAction) and the
// use cases in lib/auth/admin.ts check the permission again; Next refuses a
// server action whose Origin does not match the Host (CSRF).
import { revalidatePath } from "next/cache";
import { getPrisma } from "@/lib/db/prisma";
import { actionRefusal } from "@/lib/errors";
import { authorizeAction } from "@/lib/auth/session";
import { createTokenAsAdmin, createUserAsAdmin, revokeToken, setUserDisabled } from "@/lib/auth/admin";
import { createTenant } from "@/lib/tenants/manage-tenants";
import { dlqThresholdField, setNotificationSettings } from "@/lib/notify/settings";

export type ActionResult<T = undefined> = { ok: true; value?: T } | { ok: false; error: string };

async function run<T>(fn: () => Promise<T>): Promise<ActionResult<T>> {
  try {
    return { ok: true, value: await fn() };
  } catch (err) {
    // A refused field says which and why, next to the form, instead of an error page.
    const refusal = actionRefusal(err);
    if (refusal === null) throw err;
    return { ok: false, error: refusal };
  }
}

/** A tenant field: "" (or absent) is global. */
const tenantOf = (v: unknown): string | null => (typeof v === "string" && v.trim() ? v.trim() : null);

export async function createUserAction(input: {
  email: string;
  role: string;
  tenantId?: string;
}): Promise<ActionResult<{ email: string; role: string; password: string }>> {
  return run(async () => {
    const viewer = await authorizeAction("users.manage");
    const u = await createUserAsAdmin(getPrisma(), { email: String(input.email ?? ""), role: String(input.role ?? ""), tenantId: tenantOf(input.tenantId) }, viewer);
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

export async function createTokenAction(input: { role: string; name?: string; tenantId?: string }): Promise<ActionResult<{ name: string; role: string; token: string }>> {
  return run(async () => {
    const viewer = await authorizeAction("tokens.manage");
    const t = await createTokenAsAdmin(
      getPrisma(),
      { role: String(input.role ?? ""), name: input.name ? String(input.name) : undefined, tenantId: tenantOf(input.tenantId) },
      viewer,
    );
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

export async function createTenantAction(input: { id: string; name: string }): Promise<ActionResult<{ id: string; name: string }>> {
  return run(async () => {
    const viewer = await authorizeAction("tenants.manage");
    const t = await createTenant(getPrisma(), { id: String(input.id ?? ""), name: String(input.name ?? "") }, viewer);
    revalidatePath("/admin/tenants");
    return { id: t.id, name: t.name };
  });
}

/** The default dead-letter threshold (every district without its own), as typed: a whole number, its range checked by the use case. */
export async function setDefaultDlqThresholdAction(input: { dlqThreshold: string }): Promise<ActionResult<{ dlqThreshold: number }>> {
  return run(async () => {
    const viewer = await authorizeAction("notifications.manage");
    const dlqThreshold = dlqThresholdField(input.dlqThreshold, { optional: false });
    const saved = await setNotificationSettings(getPrisma(), { dlqThreshold }, viewer);
    revalidatePath("/admin/tenants");
    revalidatePath("/notifications");
    return saved;
  });
}

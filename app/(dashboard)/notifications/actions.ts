"use server";
// Saving a tenant's notification contacts from the dashboard: the same use case as PUT /api/v1/tenants/:id/contacts
// (scoped, validated, audited there); a refusal comes back as one line for the form.
import { revalidatePath } from "next/cache";
import { ZodError } from "zod";
import { getPrisma } from "@/lib/db/prisma";
import { AppError } from "@/lib/errors";
import { authorizeAction } from "@/lib/auth/session";
import { setContacts } from "@/lib/notify/contacts";

export type SaveContactsResult = { ok: true; emails: string[]; webhookUrl: string | null; dlqThreshold: number | null } | { ok: false; error: string };

/** The threshold field as typed: empty is the operator's default; anything else must be a whole number (the use case checks its range). */
function thresholdOf(raw: unknown): number | null {
  const text = String(raw ?? "").trim();
  if (text === "") return null;
  if (!/^\d+$/.test(text)) throw new AppError("validation_failed", `dlqThreshold: "${text.slice(0, 20)}" is not a whole number of dead letters.`);
  return Number(text);
}

export async function saveContactsAction(tenant: string, input: { emails: string[]; webhookUrl: string; dlqThreshold: string }): Promise<SaveContactsResult> {
  try {
    const viewer = await authorizeAction("contacts.update");
    const saved = await setContacts(
      getPrisma(),
      String(tenant),
      { emails: (input.emails ?? []).map(String), webhookUrl: input.webhookUrl ? String(input.webhookUrl) : null, dlqThreshold: thresholdOf(input.dlqThreshold) },
      viewer,
    );
    revalidatePath("/notifications");
    revalidatePath("/admin/tenants");
    return { ok: true, emails: saved.emails, webhookUrl: saved.webhookUrl, dlqThreshold: saved.dlqThreshold };
  } catch (err) {
    if (err instanceof AppError) return { ok: false, error: err.message };
    if (err instanceof ZodError) return { ok: false, error: err.issues.map((i) => `${i.path.join(".") || "input"}: ${i.message}`).join("; ") };
    throw err;
  }
}

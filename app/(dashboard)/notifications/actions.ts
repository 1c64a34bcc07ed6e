"use server";
// Saving a tenant's notification contacts from the dashboard: the same use case as PUT /api/v1/tenants/:id/contacts
// (scoped, validated, audited there); a refusal comes back as one line for the form.
import { revalidatePath } from "next/cache";
import { getPrisma } from "@/lib/db/prisma";
import { actionRefusal } from "@/lib/errors";
import { authorizeAction } from "@/lib/auth/session";
import { setContacts } from "@/lib/notify/contacts";
import { dlqThresholdField } from "@/lib/notify/settings";

export type SaveContactsResult = { ok: true; emails: string[]; webhookUrl: string | null; dlqThreshold: number | null } | { ok: false; error: string };

export async function saveContactsAction(tenant: string, input: { emails: string[]; webhookUrl: string; dlqThreshold: string }): Promise<SaveContactsResult> {
  try {
    const viewer = await authorizeAction("contacts.update");
    const saved = await setContacts(
      getPrisma(),
      String(tenant),
      {
        emails: (input.emails ?? []).map(String),
        webhookUrl: input.webhookUrl ? String(input.webhookUrl) : null,
        dlqThreshold: dlqThresholdField(input.dlqThreshold, { optional: true }),
      },
      viewer,
    );
    revalidatePath("/notifications");
    revalidatePath("/admin/tenants");
    return { ok: true, emails: saved.emails, webhookUrl: saved.webhookUrl, dlqThreshold: saved.dlqThreshold };
  } catch (err) {
    const refusal = actionRefusal(err);
    if (refusal === null) throw err;
    return { ok: false, error: refusal };
  }
}
